import type { Metadata } from "next";
import { Suspense } from "react";
import { HostOverview } from "@/components/fleet/HostOverview";

type Params = { params: Promise<{ host: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `${decodeURIComponent((await params).host)} · gpudeck` };
}

export default async function HostPage({ params }: Params) {
  const host = decodeURIComponent((await params).host);
  return (
    <Suspense fallback={<p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>}>
      <HostOverview host={host} />
    </Suspense>
  );
}
