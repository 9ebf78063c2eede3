"use client";
/**
 * While a session must set up two-factor sign-in first (panel.require_2fa_for), the Account page
 * shows only that: everything else is refused by the panel until then.
 */
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useTRPC } from "@/components/trpc";

export function EnrolGate({ children, fallback = null }: { children: ReactNode; fallback?: ReactNode }) {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  if (me.data?.twoFactorEnrolment) return <>{fallback}</>;
  return <>{children}</>;
}
