/**
 * `hosts.*`: the fleet. Everyone signed in sees every host's summary; admins add, change and
 * remove the hosts stored in the panel database (those from GPUDECK_AGENTS_FILE or
 * GPUDECK_AGENT_URL are read-only here). Every change and every refused one is audited. A
 * token goes in, never out: reads say only whether one is set and its last characters to admins.
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import type { Actor } from "../../contract/actors";
import { sameOrigin, secretMustFollowText } from "../../contract/origin";
import { egressPolicy, urlEgressProblem } from "../../egress/guard";
import { addHostInput, hostInput, removeHostInput, updateHostInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { tokenHint, type StoredHostInput } from "../fleet/hostStore";
import { plainHttpProblem } from "../fleet/hostsConfig";
import { normaliseFingerprint } from "../tlsPin";
import type { HostLink } from "../fleet/hostLink";
import { viewHostSummary } from "../roleViews";
import { audited, hostLink, notSignedIn, signedInProcedure, type PanelRequest, type PanelServices } from "../trpc";

/** A host as the Hosts page shows it: the summary, and for admins where it is and whether a token is set. */
function hostView(link: HostLink, actor: Actor) {
  const admin = actor.role === "admin";
  return {
    // the connection error names the agent's URL and the token's file: admins only (../roleViews.ts)
    ...viewHostSummary(link.summary(), { admin, journal: true }),
    url: admin ? link.config.url : null,
    tokenSet: link.config.token !== null,
    tokenHint: admin ? tokenHint(link.config.token) : null,
    editable: link.config.source === "panel",
    /** plain http to an agent off loopback, on purpose (insecure_http): the Hosts page shows a warning badge */
    insecureHttp: link.config.url.startsWith("http://") && plainHttpProblem(link.config.url, false) !== null,
    caSet: Boolean(link.config.tls?.ca),
    fingerprint: admin ? (link.config.tls?.fingerprint ?? null) : null,
  };
}

function requireAdmin(ctx: { actor: Actor | null; panelRequest: PanelRequest; services: PanelServices }): Actor {
  if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
  const decision = can(ctx.actor, "settings.manage", null, ctx.services.auth.authorization);
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return ctx.actor;
}

/** A change to the hosts: audited under `action` (with the host's name when it is one), admins only. */
function hostChange(action: string) {
  return audited((raw) => ({ action, unit: null, host: typeof raw.name === "string" ? raw.name.slice(0, 100) : null })).use(({ ctx, next }) => {
    // no login in demo mode: nobody may point this panel at another agent
    if (ctx.services.demo)
      throw new TRPCError({
        code: "FORBIDDEN",
        message: "Not allowed: a demo panel (GPUDECK_DEMO) shows only its simulated hosts; add hosts on a panel with sign-in.",
      });
    return next({ ctx: { actor: requireAdmin(ctx) } });
  });
}

async function record(
  ctx: { actor: Actor; panelRequest: PanelRequest; services: PanelServices; audit: { recorded: boolean } },
  action: string,
  host: string,
  detail: string,
): Promise<void> {
  await ctx.services.auth.audit.recordAudit({
    user: ctx.actor.user,
    role: ctx.actor.role,
    sourceAddr: ctx.panelRequest.sourceAddr,
    host,
    unit: null,
    action,
    reason: null,
    outcome: "ok",
    detail,
  });
  ctx.audit.recorded = true;
}

/** A url the egress guard refuses, refused when it is saved (the connection is checked again). */
function reachable(url: string | undefined): void {
  const problem = url === undefined ? null : urlEgressProblem(url, egressPolicy());
  if (problem) throw new TRPCError({ code: "BAD_REQUEST", message: `Not an agent address the panel connects to: ${problem}.` });
}

/** The CA / pin / plain-http fields, checked against the url they go with (what the agents file checks). */
function transport(url: string, given: { caPem?: string | null; fingerprint?: string | null; insecureHttp?: boolean }, before?: StoredHostInput) {
  const caPem = given.caPem === undefined ? (before?.caPem ?? null) : given.caPem;
  const raw = given.fingerprint === undefined ? (before?.fingerprint ?? null) : given.fingerprint;
  const insecureHttp = given.insecureHttp ?? before?.insecureHttp ?? false;
  const fingerprint = raw === null || raw.trim() === "" ? null : normaliseFingerprint(raw);
  if (raw && raw.trim() && !fingerprint)
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: "fingerprint is not a SHA-256 fingerprint (64 hex digits, e.g. from: openssl x509 -noout -fingerprint -sha256 -in cert.pem).",
    });
  if ((caPem || fingerprint) && !url.startsWith("https://"))
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: "A CA file or fingerprint needs an https:// url (the agent serves TLS with GPUDECK_AGENT_TLS_CERT/KEY).",
    });
  const plain = plainHttpProblem(url, insecureHttp);
  if (plain) throw new TRPCError({ code: "BAD_REQUEST", message: `${plain}.` });
  return { caPem, fingerprint, insecureHttp };
}

function editable(services: PanelServices, name: string): void {
  const link = hostLink(services, name);
  if (link.config.source !== "panel") {
    const where = link.config.source === "file" ? "GPUDECK_AGENTS_FILE" : "GPUDECK_AGENT_URL";
    throw new TRPCError({ code: "BAD_REQUEST", message: `Host ${name} comes from ${where}; change it there (the Hosts page only edits hosts added here).` });
  }
}

export const hostsRouter = router({
  list: signedInProcedure.query(({ ctx }) => ctx.services.fleet.all().map((l) => hostView(l, ctx.actor))),
  get: signedInProcedure.input(hostInput).query(({ input, ctx }) => hostView(hostLink(ctx.services, input.host), ctx.actor)),

  add: hostChange("host.add")
    .input(addHostInput)
    .mutation(async ({ input, ctx }) => {
      const { services } = ctx;
      reachable(input.url);
      if (services.fleet.get(input.name)) throw new TRPCError({ code: "CONFLICT", message: `A host named ${input.name} already exists.` });
      const url = input.url.replace(/\/+$/, "");
      const stored = await services.hostStore.add({ name: input.name, url, token: input.token, ...transport(url, input) }, ctx.actor.user);
      const link = services.fleet.put(stored);
      await record(ctx, "host.add", input.name, `url=${stored.url}`);
      return hostView(link, ctx.actor);
    }),

  update: hostChange("host.update")
    .input(updateHostInput)
    .mutation(async ({ input, ctx }) => {
      const { services } = ctx;
      editable(services, input.name);
      reachable(input.url);
      const before = hostLink(services, input.name).config;
      // the agent token goes wherever the url points: a new origin needs the token again
      if (input.url !== undefined && input.token === undefined && !sameOrigin(before.url, input.url))
        throw new TRPCError({ code: "BAD_REQUEST", message: secretMustFollowText("agent token", "token", before.url, input.url) });
      const url = input.url?.replace(/\/+$/, "") ?? before.url;
      const kept = {
        caPem: before.tls?.ca ?? null,
        fingerprint: before.tls?.fingerprint ?? null,
        insecureHttp: before.insecureHttp ?? false,
      } as StoredHostInput;
      const stored = await services.hostStore.update(input.name, { url: input.url?.replace(/\/+$/, ""), token: input.token, ...transport(url, input, kept) });
      if (!stored) throw new TRPCError({ code: "NOT_FOUND", message: `There is no host named ${input.name} on the Hosts page.` });
      const link = services.fleet.put(stored);
      const changes = [
        input.url !== undefined ? `url=${stored.url}` : null,
        input.token !== undefined ? "token replaced" : null,
        input.caPem !== undefined ? (input.caPem ? "CA replaced" : "CA removed") : null,
        input.fingerprint !== undefined ? (input.fingerprint ? "fingerprint pinned" : "fingerprint removed") : null,
        input.insecureHttp !== undefined ? `insecure_http=${input.insecureHttp}` : null,
      ].filter(Boolean);
      await record(ctx, "host.update", input.name, changes.length ? changes.join(" ") : "no change");
      return hostView(link, ctx.actor);
    }),

  remove: hostChange("host.remove")
    .input(removeHostInput)
    .mutation(async ({ input, ctx }) => {
      const { services } = ctx;
      editable(services, input.name);
      await services.hostStore.remove(input.name);
      services.fleet.remove(input.name);
      await record(ctx, "host.remove", input.name, "removed");
      return { removed: input.name };
    }),
});
