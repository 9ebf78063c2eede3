import type { Metadata } from "next";
import { Suspense } from "react";
import { AuditView } from "@/components/auth/AuditView";

export const metadata: Metadata = { title: "Audit log · gpudeck" };

export default function AuditPage() {
  return (
    <Suspense fallback={<p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>}>
      <AuditView />
    </Suspense>
  );
}
