"use client";
/**
 * Header parts that depend on who is signed in: the Audit link (operators and admins), the Hosts
 * and Users links (admins) and the user menu (role, change password, sign out). The server redirects page
 * loads without a session to /login; this also sends the browser there when a session ends while
 * a page is open.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect } from "react";
import { useTRPC } from "@/components/trpc";
import { loadPage } from "./shared";

const PUBLIC_PAGES = ["/login", "/setup"];
const linkClass = "text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100";

function useMe() {
  const trpc = useTRPC();
  return useQuery(trpc.session.me.queryOptions(undefined, { refetchInterval: 60_000, refetchOnWindowFocus: true, staleTime: 30_000 }));
}

export function AuditNavLink() {
  const me = useMe();
  const role = me.data?.user?.role;
  if (!role || role === "viewer") return null;
  return (
    <Link href="/audit" className={linkClass}>
      Audit
    </Link>
  );
}

/** Admins add and remove the fleet's hosts on /hosts (anyone may open it to see where hosts come from). */
export function HostsNavLink() {
  const me = useMe();
  if (me.data?.user?.role !== "admin") return null;
  return (
    <Link href="/hosts" className={linkClass}>
      Hosts
    </Link>
  );
}

/** Admins manage users from /users (demo mode has none). */
export function UsersNavLink() {
  const me = useMe();
  if (me.data?.demo || me.data?.user?.role !== "admin") return null;
  return (
    <Link href="/users" className={linkClass}>
      Users
    </Link>
  );
}

export function UserMenu() {
  const trpc = useTRPC();
  const me = useMe();
  const pathname = usePathname();
  const logout = useMutation(
    trpc.session.logout.mutationOptions({
      // a full load: every cache and live stream of the signed-in user goes away; signed in
      // through the provider, its own sign-out next (it sends the browser back to /login)
      onSettled: (data) => loadPage(data?.endSessionUrl ?? "/login"),
    }),
  );
  const signedOut = me.data !== undefined && !me.data.demo && me.data.user === null;
  useEffect(() => {
    if (!signedOut || PUBLIC_PAGES.some((p) => pathname.startsWith(p))) return;
    const next = `${window.location.pathname}${window.location.search}`;
    loadPage(next === "/" ? "/login" : `/login?next=${encodeURIComponent(next)}`);
  }, [signedOut, pathname]);

  // a role that must use two-factor sign-in, not set up yet: the Account page until it is
  const mustEnrol = me.data?.twoFactorEnrolment === true;
  useEffect(() => {
    if (mustEnrol && !pathname.startsWith("/account")) loadPage("/account");
  }, [mustEnrol, pathname]);

  const user = me.data?.user;
  if (!user) {
    if (signedOut && !pathname.startsWith("/login")) {
      return (
        <Link href="/login" className={linkClass}>
          Sign in
        </Link>
      );
    }
    return null;
  }
  return (
    <details className="relative" data-testid="user-menu">
      <summary className="flex min-h-9 cursor-pointer list-none items-center gap-1 rounded-md px-2 py-1 hover:bg-zinc-100 dark:hover:bg-zinc-800">
        <span className="max-w-[6rem] truncate font-medium sm:max-w-[10rem]" data-testid="user-name">
          {user.name}
        </span>
        <span className="hidden text-xs text-zinc-500 dark:text-zinc-400 sm:inline">({user.role})</span>
        <span aria-hidden className="text-xs text-zinc-500 dark:text-zinc-400">
          ▾
        </span>
      </summary>
      <div className="absolute right-0 z-20 mt-1 w-60 space-y-1 rounded-md border border-zinc-200 bg-white p-2 text-sm shadow-lg dark:border-zinc-700 dark:bg-zinc-900">
        <p className="px-2 py-1 text-xs text-zinc-500 dark:text-zinc-400">
          Signed in as <b>{user.name}</b>, {user.role}
          {user.role === "operator" && user.unitPatterns.length > 0 && <> for {user.unitPatterns.join(", ")}</>}
          {user.via === "proxy" && <> (via the reverse proxy)</>}
        </p>
        {user.via === "session" && (
          <Link href="/account" className="block rounded px-2 py-1.5 hover:bg-zinc-100 dark:hover:bg-zinc-800">
            Account: password, two-factor, tokens
          </Link>
        )}
        {!me.data?.demo && user.via === "session" && (
          <button
            type="button"
            onClick={() => logout.mutate()}
            disabled={logout.isPending}
            className="block w-full rounded px-2 py-1.5 text-left hover:bg-zinc-100 disabled:opacity-50 dark:hover:bg-zinc-800"
          >
            Sign out
          </button>
        )}
        {me.data?.demo && <p className="px-2 py-1 text-xs text-zinc-500 dark:text-zinc-400">Demo mode: no sign-in.</p>}
      </div>
    </details>
  );
}
