/**
 * [[hosts]] in the config file: the agents a panel watches. They reach the panel as
 * GPUDECK_AGENTS_JSON, the same list the agents file holds (server/panel/fleet/hostsConfig.ts
 * parses both), with each token given one of three ways:
 *   token_file  a file holding it (relative to the config file's folder)
 *   token_env   the name of an environment variable holding it, so the config file itself can be
 *               world-readable while the token lives in a root-only EnvironmentFile= of the unit
 *               (a DynamicUser panel cannot read root-only files itself)
 *   token       inline (then keep the config file private)
 * An https:// agent may also name ca_file (PEM its certificate must chain to) and/or fingerprint
 * (its certificate's SHA-256, pinned).
 */
import path from "node:path";
import { z } from "zod";
import { agentTokenProblem } from "../contract/agentToken";
import { hostNameProblem } from "../contract/fleet";
import { agentUrlSchema } from "../contract/schemas";

const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const hostSchema = z
  .strictObject({
    name: z.string({ error: 'must be a host name in quotes, e.g. "gpu-a"' }).superRefine((name, ctx) => {
      const problem = hostNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
    url: z.string({ error: 'must be the agent\'s URL in quotes, e.g. "http://10.0.0.5:9300"' }).pipe(agentUrlSchema),
    token_file: z.string({ error: "must be a path in quotes" }).min(1, { error: "must not be empty" }).optional(),
    token_env: z
      .string({ error: "must be the name of an environment variable in quotes" })
      .regex(ENV_NAME_RE, { error: "must be an environment variable name (letters, digits, _), e.g. GPUDECK_TOKEN_GPU_A" })
      .optional(),
    token: z
      .string({ error: "must be text in quotes" })
      .superRefine((token, ctx) => {
        const problem = agentTokenProblem(token);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    // https agents: the CA its certificate must chain to, and/or its pinned SHA-256 (hostsConfig checks both)
    ca_file: z.string({ error: "must be a path in quotes" }).min(1, { error: "must not be empty" }).optional(),
    fingerprint: z.string({ error: 'must be the certificate\'s SHA-256 in quotes, e.g. "AB:CD:…"' }).optional(),
    // plain http to an agent off loopback is refused unless this says it is meant
    insecure_http: z.boolean({ error: "must be true or false (no quotes)" }).optional(),
  })
  .superRefine((host, ctx) => {
    const given = (["token_file", "token_env", "token"] as const).filter((k) => host[k] !== undefined);
    if (given.length === 0) ctx.addIssue({ code: "custom", message: "needs its agent's token: give token_file, token_env or token", path: [] });
    if (given.length > 1)
      ctx.addIssue({ code: "custom", message: `give one of token_file, token_env and token, not ${given.join(" and ")}`, path: [given[1]!] });
  });

export const hostsSchema = z.array(hostSchema, { error: "must be a list of agents: write one [[hosts]] table per agent" }).superRefine((hosts, ctx) => {
  const seen = new Map<string, number>();
  hosts.forEach((h, i) => {
    const first = seen.get(h.name);
    if (first !== undefined)
      ctx.addIssue({ code: "custom", message: `"${h.name}" is also the name of hosts[${first}]; names must be unique`, path: [i, "name"] });
    else seen.set(h.name, i);
  });
});

export type HostEntry = z.infer<typeof hostSchema>;

/** One entry of the agents-file list. */
interface AgentsFileEntry {
  name: string;
  url: string;
  token?: string;
  tokenFile?: string;
  caFile?: string;
  fingerprint?: string;
  insecureHttp?: boolean;
}

/** Thrown with the index of the entry and the key at fault. */
export class HostEntryError extends Error {
  constructor(
    message: string,
    readonly path: readonly (string | number)[],
  ) {
    super(message);
  }
}

/** The list as GPUDECK_AGENTS_JSON text; token_env is read from `env` now, token files later by the panel. */
export function hostsToAgentsJson(hosts: readonly HostEntry[], configDir: string, env: Readonly<Record<string, string | undefined>>): string {
  const list: AgentsFileEntry[] = hosts.map((h, i) => {
    const entry: AgentsFileEntry = { name: h.name, url: h.url };
    if (h.ca_file !== undefined) entry.caFile = path.resolve(configDir, h.ca_file);
    if (h.fingerprint !== undefined) entry.fingerprint = h.fingerprint;
    if (h.insecure_http !== undefined) entry.insecureHttp = h.insecure_http;
    if (h.token_file !== undefined) entry.tokenFile = path.resolve(configDir, h.token_file);
    else if (h.token !== undefined) entry.token = h.token;
    else if (h.token_env !== undefined) {
      const value = env[h.token_env];
      if (value === undefined || value.trim() === "") {
        throw new HostEntryError(
          `names ${h.token_env}, which is not set in the panel's environment (set it, e.g. in the unit's EnvironmentFile=/etc/gpudeck/panel.env)`,
          [i, "token_env"],
        );
      }
      const problem = agentTokenProblem(value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""));
      if (problem) throw new HostEntryError(`the value of ${h.token_env}: ${problem}`, [i, "token_env"]);
      entry.token = value;
    }
    return entry;
  });
  return JSON.stringify(list);
}
