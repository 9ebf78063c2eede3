/**
 * The panel's typed tRPC client to an agent. Calls are not batched: each carries the acting
 * user in a header, and a batch could mix two users' calls.
 */
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink, type TRPCClient } from "@trpc/client";
import { EventSource } from "eventsource";
import type { AgentRouter } from "../agent/router";
import type { Actor } from "../contract/actors";
import { wireTransformer } from "../contract/wire";
import { agentFetch, type AgentTls } from "./agentTls";

export type AgentClient = TRPCClient<AgentRouter>;

export interface AgentConnection {
  url: string;
  token: string | null;
  /** https with a CA file or a pinned certificate (./agentTls.ts); otherwise the system's CAs */
  tls?: AgentTls | null;
}

export function encodeActor(actor: Actor | null | undefined): string | undefined {
  if (!actor) return undefined;
  const { user, role, sourceAddr } = actor;
  return Buffer.from(JSON.stringify({ user, role, sourceAddr }), "utf8").toString("base64url");
}

export function createAgentClient(conn: AgentConnection): AgentClient {
  // every agent connection goes through the egress guard (no link-local or metadata address)
  const doFetch = agentFetch(conn.tls ?? null);
  const headersFor = (context: Record<string, unknown> | undefined): Record<string, string> => {
    const h: Record<string, string> = {};
    if (conn.token) h.authorization = `Bearer ${conn.token}`;
    const actor = encodeActor(context?.actor as Actor | undefined);
    if (actor) h["x-gpudeck-actor"] = actor;
    return h;
  };
  return createTRPCClient<AgentRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: `${conn.url}/trpc`,
          transformer: wireTransformer,
          EventSource,
          eventSourceOptions: ({ op }) => ({
            fetch: (input: string | URL | Request, init?: RequestInit) =>
              doFetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headersFor(op.context) } }),
          }),
        }),
        false: httpLink({
          url: `${conn.url}/trpc`,
          transformer: wireTransformer,
          fetch: doFetch,
          headers: ({ op }) => headersFor(op.context),
        }),
      }),
    ],
  });
}
