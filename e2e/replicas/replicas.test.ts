/**
 * Two panel processes (one build, two ports) on one PostgreSQL, watching one agent (a real agent
 * on a simulated host, over HTTP), driven as a browser would over HTTP: users made with
 * `npm run user` against GPUDECK_DATABASE_URL; a sign-in on B works on A; an action on B is in
 * A's audit log and reaches a browser's stream on A within 2 s; the same action on A then needs
 * confirmation; failed sign-ins alternating between A and B trip the shared limit at the total;
 * an alert is delivered once, not twice; A is killed and a browser resumes on B with its last
 * event id and misses nothing.
 *
 * Needs PostgreSQL (in CI it must be there) and a build of the current sources (made here when
 * missing, into GPUDECK_DIST_DIR or .next). Without PostgreSQL, or when no build can be made
 * outside CI, it says so loudly and skips.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../../server/agent/main";
import { TestReceiver } from "../../server/alerts/testing/receiver";
import type { AlertWebhookPayload } from "../../server/contract/alerts";
import { HOST, startTestAgent } from "../../server/panel/panelTestHarness";
import { skipWithoutPg, startPgCluster, type PgCluster } from "../../server/store/testing/pgCluster";
import { DIST_DIR, ensureBuild, openStream, ROOT, rpc, sessionCookie, startReplica, type Replica, type SseEvent } from "./panelReplica";

const PASSWORD = "correct horse battery staple";
const EMBED = "vllm-embed-small.service";
/** the simulated host's unit whose ExecStartPre fails: failed from the start */
const FAILED = "vllm-llama-70b.service";

function skipReason(): string | null {
  return skipWithoutPg("two panel replicas on PostgreSQL (e2e/replicas)") ? "no PostgreSQL" : null;
}
let skip = skipReason();
if (!skip) {
  const buildProblem = await ensureBuild((m) => console.log(`[e2e/replicas] ${m}`));
  if (buildProblem && process.env.CI) throw new Error(`e2e/replicas needs a build: ${buildProblem}`);
  if (buildProblem) {
    console.warn(`\n*** SKIPPING e2e/replicas: ${buildProblem} ***\n`);
    skip = "no build";
  }
}

const run = promisify(execFile);
const SECRET_KEY = "cd".repeat(32);
async function npmRunUser(args: string[], databaseUrl: string): Promise<void> {
  const child = run(process.execPath, ["--import", "tsx", "scripts/user.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, GPUDECK_DATABASE_URL: databaseUrl, GPUDECK_SECRET_KEY: SECRET_KEY },
  });
  child.child.stdin!.end(`${PASSWORD}\n`);
  await child;
}

const seqOf = (id: string | null) => Number(/-(\d+)$/.exec(id ?? "")?.[1] ?? -1);
/** events a resume replays; the latest GPU sample and host summary are sent again at the current position instead */
const replayable = (e: SseEvent) => !/^\{"kind":"(gpu|hosts)"/.test(e.data);

describe.skipIf(skip !== null)("two panel processes on one PostgreSQL", () => {
  let cluster: PgCluster;
  let agent: RunningAgent;
  const receiver = new TestReceiver();
  let a: Replica;
  let b: Replica;
  const cookies: Record<string, string> = {};

  beforeAll(async () => {
    cluster = await startPgCluster();
    agent = await startTestAgent();
    await receiver.start();
    // the CLI makes the database (migrations) and the users, as an operator would before the first start
    await npmRunUser(["add", "ada", "--role", "admin", "--password-stdin"], cluster.url);
    await npmRunUser(["add", "otto", "--role", "operator", "--units", "vllm-*", "--password-stdin"], cluster.url);
    const env = {
      GPUDECK_DATABASE_URL: cluster.url,
      // every replica (and the CLI) holds the same key for the secrets in the database
      GPUDECK_SECRET_KEY: SECRET_KEY,
      GPUDECK_AGENT_URL: agent.url,
      GPUDECK_AGENT_TOKEN: agent.token,
      GPUDECK_AGENT_NAME: HOST,
      GPUDECK_ALERT_WEBHOOK_URL: receiver.url("/hook"),
      GPUDECK_ALERT_GROUP_SECONDS: "1",
      GPUDECK_DIST_DIR: DIST_DIR,
    };
    [a, b] = await Promise.all([startReplica("A", env), startReplica("B", env)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await receiver.stop();
    await agent?.close();
    cluster?.stop();
  });

  it("both report their database and LISTEN connection as up on /healthz", async () => {
    for (const r of [a, b]) {
      const res = await fetch(`${r.origin}/healthz`);
      expect(res.status, r.name).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, database: { dialect: "postgres", ok: true }, listen: { ok: true } });
    }
  });

  it("a sign-in on B works on A (sessions are in the database: no stickiness)", async () => {
    for (const user of ["ada", "otto"]) {
      const r = await rpc(b, "session.login", { username: user, password: PASSWORD });
      expect(r.status, r.message ?? "").toBe(200);
      cookies[user] = sessionCookie(r.headers);
    }
    const me = await rpc(a, "session.me", undefined, { cookie: cookies.ada, mutation: false });
    expect(me.data).toMatchObject({ user: { name: "ada", role: "admin" }, unavailable: null });
  });

  it("an action on B is in A's audit log and reaches a browser's stream on A within 2 s; again on A it needs confirmation", async () => {
    const stream = openStream(a, cookies.otto!, { watch: "host", host: HOST });
    try {
      await stream.until(/"kind":"host-snapshot"/, 15_000);
      const from = stream.events.length;
      const act = await rpc(b, "units.restart", { host: HOST, name: EMBED, reason: "replicas e2e" }, { cookie: cookies.otto });
      expect(act.status, act.message ?? "").toBe(200);
      const t0 = Date.now();
      await stream.until(new RegExp(`"kind":"action".*"unit":"${EMBED.replace(/\./g, "\\.")}".*"user":"otto"`), 2000, from);
      expect(Date.now() - t0).toBeLessThan(2000);
      const audit = await rpc(a, "audit.list", { action: "restart", limit: 5 }, { cookie: cookies.ada, mutation: false });
      expect((audit.data as { rows: unknown[] }).rows[0]).toMatchObject({ user: "otto", unit: EMBED, reason: "replicas e2e" });
      const again = await rpc(a, "units.restart", { host: HOST, name: EMBED }, { cookie: cookies.ada });
      expect(again.status).toBe(409);
      expect(again.message).toMatch(/^Confirmation required: otto restarted vllm-embed-small\.service \d+ s ago/);
    } finally {
      await stream.close();
    }
  });

  it("failed sign-ins alternating between A and B trip the shared limit at the total", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await rpc(i % 2 ? b : a, "session.login", { username: "mallory", password: `guess number ${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it("an alert is delivered once, not twice", async () => {
    const about = () =>
      receiver.received.filter((m) => {
        const p = m.json as AlertWebhookPayload | null;
        return p?.kind === "alert" && p.state === "firing" && p.alerts.some((x) => x.unit === FAILED && x.rule === "unit-failed");
      });
    await expect.poll(() => about().length, { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);
    // both replicas watch the same failure; give a second delivery every chance (grouping 1 s, polls)
    await new Promise((r) => setTimeout(r, 4000));
    expect(about()).toHaveLength(1);
  });

  it("A is killed: a browser resumes on B with its last event id and misses nothing", async () => {
    const reference = openStream(b, cookies.ada!, { watch: "host", host: HOST });
    const browser = openStream(a, cookies.ada!, { watch: "host", host: HOST });
    try {
      await Promise.all([reference.until(/"kind":"host-snapshot"/, 15_000), browser.until(/"kind":"host-snapshot"/, 15_000)]);
      await browser.until(/"kind":"gpu"/);
      const last = browser.events.at(-1)!.id!;
      await a.kill();
      // what happens while the browser has no panel: another restart, through B
      const act = await rpc(b, "units.restart", { host: HOST, name: EMBED, confirmed: true, reason: "while A is down" }, { cookie: cookies.ada });
      expect(act.status, act.message ?? "").toBe(200);
      await reference.until(/"kind":"action".*"reason":"while A is down"/);
      const resumed = openStream(b, cookies.ada!, { watch: "host", host: HOST }, last);
      try {
        const upTo = reference.events.filter(replayable).at(-1)!;
        await resumed.until(new RegExp(`^\\{"kind":"${JSON.parse(upTo.data).kind}"`), 10_000);
        await expect.poll(() => resumed.events.some((e) => e.id === upTo.id), { timeout: 10_000 }).toBe(true);
        // a replay from the browser's position, not a fresh snapshot
        expect(resumed.events.some((e) => /"kind":"host-snapshot"/.test(e.data))).toBe(false);
        const between = (list: SseEvent[]) =>
          list
            .filter(replayable)
            .filter((e) => seqOf(e.id) > seqOf(last) && seqOf(e.id) <= seqOf(upTo.id))
            .map((e) => e.id);
        const expected = between(reference.events);
        expect(expected.length).toBeGreaterThan(0);
        expect(between(resumed.events)).toEqual(expected);
      } finally {
        await resumed.close();
      }
    } finally {
      await Promise.all([reference.close(), browser.close()]);
    }
  });
});
