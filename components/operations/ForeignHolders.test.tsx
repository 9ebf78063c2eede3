import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { TRPCProvider } from "@/components/trpc";
import type { ForeignHolder } from "@/server/contract/operations";
import type { PanelRouter } from "@/server/panel/router";
import { wireTransformer } from "@/server/contract/wire";
import { ForeignHolders } from "./ForeignHolders";

const holders: ForeignHolder[] = [
  {
    pid: 4821,
    cmdline: ["python3", "train.py", "--lr", "1e-4"],
    processName: "python3",
    unit: null,
    gpuUuid: "GPU-2",
    gpuIndex: 2,
    usedMiB: 2048,
    startedAtMs: 1,
  },
  { pid: 5000, cmdline: ["vllm", "serve"], processName: "vllm", unit: "vllm-other.service", gpuUuid: "GPU-3", gpuIndex: 3, usedMiB: null, startedAtMs: null },
];

/** Server-rendered: session.me has not answered, so this is what a non-admin sees. */
function render() {
  const queryClient = new QueryClient();
  const trpcClient = createTRPCClient<PanelRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: wireTransformer })] });
  return text(
    renderToString(
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
          <ForeignHolders host="gpu-a" unit="vllm-kimi-k25.service" holders={holders} />
        </TRPCProvider>
      </QueryClientProvider>,
    ),
  );
}

/** the text React renders, without its text-node separators */
const text = (html: string) => html.replace(/<!-- -->/g, "");

describe("ForeignHolders", () => {
  it("lists each process outside the unit: PID, command line, its unit or none, GPU and memory ('not reported', never 0)", () => {
    const html = render();
    expect(html.match(/data-testid="foreign-holder"/g)).toHaveLength(2);
    expect(html).toContain("PID 4821");
    expect(html).toContain("python3 train.py --lr 1e-4");
    expect(html).toContain("outside any unit");
    expect(html).toContain("GPU 2 · 2.0 GiB");
    expect(html).toContain("vllm-other.service");
    expect(html).toContain("GPU 3 · amount not reported");
  });

  it("offers SIGKILL only to admins", () => {
    const html = render();
    expect(html).not.toContain("SIGKILL PID");
    expect(html).toContain("Only an admin may SIGKILL them from here");
  });
});
