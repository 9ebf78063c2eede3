import { Suspense } from "react";
import { Overview } from "@/components/Overview";

export default function OverviewPage() {
  return (
    <Suspense fallback={<p className="text-sm text-zinc-500">Loading…</p>}>
      <Overview />
    </Suspense>
  );
}
