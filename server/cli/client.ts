/**
 * The `gpudeck` commands' connection to a panel: the typed tRPC client over the panel's API with an
 * API token (`Authorization: Bearer gdk_…`; no cookie, no Origin), queries and mutations over
 * HTTP, subscriptions as server-sent events (the `eventsource` package, with the header added to
 * its fetch). Where the URL and token come from: GPUDECK_URL, GPUDECK_TOKEN or the token file.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink, type TRPCClient } from "@trpc/client";
import { EventSource } from "eventsource";
import { wireTransformer } from "../contract/wire";
import type { PanelRouter } from "../panel/router";

export type PanelClient = TRPCClient<PanelRouter>;

export class ConfigProblem extends Error {}

/** ~/.config/gpudeck/token, or under $XDG_CONFIG_HOME. */
export function tokenFilePath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, ".config");
  return path.join(base, "gpudeck", "token");
}

/** The panel's base URL and the token, or a ConfigProblem saying what to set. */
export function connectionFromEnv(env: Readonly<Record<string, string | undefined>>, home: string): { url: string; token: string } {
  const raw = env.GPUDECK_URL?.trim();
  if (!raw) throw new ConfigProblem("set GPUDECK_URL to the panel's address, e.g. GPUDECK_URL=https://gpudeck.example.com");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigProblem(`GPUDECK_URL '${raw}' is not a URL (e.g. https://gpudeck.example.com)`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ConfigProblem(`GPUDECK_URL must be http:// or https://, not ${url.protocol}`);
  let token = env.GPUDECK_TOKEN?.trim();
  if (!token) {
    const file = tokenFilePath(env, home);
    try {
      const st = statSync(file);
      if ((st.mode & 0o077) !== 0 && process.platform !== "win32") {
        throw new ConfigProblem(`${file} can be read by other users; run: chmod 600 ${file}`);
      }
      token = readFileSync(file, "utf8").trim();
    } catch (err) {
      if (err instanceof ConfigProblem) throw err;
      throw new ConfigProblem(`no API token: set GPUDECK_TOKEN, or put one in ${file} (make one on the panel's Account page)`);
    }
  }
  if (!/^gdk_[A-Za-z0-9_-]{43}$/.test(token))
    throw new ConfigProblem("the API token does not look like one (gdk_ and 43 more characters); copy it again from the Account page");
  return { url: url.toString().replace(/\/+$/, ""), token };
}

export function createPanelClient(conn: { url: string; token: string }): PanelClient {
  const auth = { authorization: `Bearer ${conn.token}`, "user-agent": "gpudeck-cli" };
  const endpoint = `${conn.url}/api/trpc`;
  return createTRPCClient<PanelRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: endpoint,
          transformer: wireTransformer,
          EventSource,
          eventSourceOptions: () => ({
            fetch: (input: string | URL | Request, init?: RequestInit) =>
              fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }),
          }),
        }),
        false: httpLink({ url: endpoint, transformer: wireTransformer, headers: () => auth }),
      }),
    ],
  });
}
