/**
 * The Hosts page's trust in an agent (issue 25, finding 11): the Add host form offers a CA file,
 * a pinned fingerprint and "insecure HTTP"; a host reached over plain HTTP off loopback has a
 * warning badge. Server-rendered: no call is made, so the client's URL is never used.
 */
import { describe, expect, it } from "vitest";
import { prerender } from "react-dom/static";
import type { ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { TRPCProvider } from "@/components/trpc";
import type { PanelRouter } from "@/server/panel/router";
import { wireTransformer } from "@/server/contract/wire";
import { AddHostForm } from "./AddHostForm";
import { HostEntryCard } from "./HostEntryCard";
import type { HostEntry } from "./hostsData";

async function render(node: ReactNode): Promise<string> {
  const queryClient = new QueryClient();
  const trpcClient = createTRPCClient<PanelRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: wireTransformer })] });
  const { prelude } = await prerender(
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {node}
      </TRPCProvider>
    </QueryClientProvider>,
  );
  return new Response(prelude).text();
}

const host = (changes: Partial<HostEntry>): HostEntry => ({
  name: "gpu-a",
  state: "connected",
  sinceMs: 0,
  error: null,
  agentVersion: "0.1.0",
  hostname: "gpu-a",
  simulated: false,
  source: "panel",
  unitCounts: {},
  gpuTotals: { gpus: 0, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry: null },
  systemd: null,
  url: "https://10.0.0.5:9300",
  tokenSet: true,
  tokenHint: "…cdef",
  editable: true,
  insecureHttp: false,
  caSet: false,
  fingerprint: null,
  ...changes,
});

const card = (h: HostEntry) =>
  render(<HostEntryCard host={h} live={undefined} admin manages nowMs={1000} onChanged={() => undefined} onRemoved={() => undefined} />);

describe("the Hosts page", () => {
  it("a host reached over plain HTTP off loopback has a warning badge; one over https has none", async () => {
    const plain = await card(host({ url: "http://10.0.0.5:9300", insecureHttp: true }));
    expect(plain).toMatch(/data-testid="host-insecure-http"[^>]*>insecure HTTP</);
    expect(plain).toMatch(/title="Plain HTTP to an agent on another machine \(insecure_http\)[^"]*Use https\."/);
    expect(await card(host({}))).not.toContain("host-insecure-http");
  });

  it("the Add host form offers a CA file, a pinned fingerprint and insecure HTTP", async () => {
    const html = await render(<AddHostForm />);
    expect(html).toMatch(/<input[^>]*type="file"[^>]*name="caFile"/);
    expect(html).toContain("CA file (https, optional)");
    expect(html).toMatch(/<input[^>]*name="fingerprint"/);
    expect(html).toContain("Pinned fingerprint (https, optional)");
    expect(html).toMatch(/<input type="checkbox" name="insecureHttp"/);
  });
});
