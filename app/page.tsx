import { Suspense } from "react";
import { FleetOverview } from "@/components/fleet/FleetOverview";

export default function FleetPage() {
  return (
    <Suspense fallback={<p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>}>
      <FleetOverview />
    </Suspense>
  );
}
