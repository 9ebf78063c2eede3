import { describe, expect, it, vi } from "vitest";
import { prerender } from "react-dom/static";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { TRPCProvider } from "@/components/trpc";
import type { PanelRouter } from "@/server/panel/router";
import type { UnitSummary } from "@/server/contract/types";
import { wireTransformer } from "@/server/contract/wire";
import { UnitActions } from "./UnitActions";
import type { ActionPermissions } from "./unitActions";
import type { GpuWaitItem } from "@/components/operations/gpuWaitPreview";

const running: UnitSummary = {
  name: "vllm.service",
  description: "vLLM",
  activeState: "active",
  subState: "running",
  loadState: "loaded",
  unitFileState: "enabled",
  result: "success",
  mainPid: 4242,
  controlPid: 0,
  nRestarts: 0,
  stateChangeUsec: 0,
  job: null,
};
const allowed = { allowed: true } as const;
const everything: ActionPermissions = { start: allowed, stop: allowed, restart: allowed, "reset-failed": allowed, kill: allowed };
const noGpu = { indexes: [], usedMiB: 0, exitedMiB: 0 };

// the page loads each dialog when it first opens (LazyConfirmDialog.test.tsx); here they are
// rendered closed, as the eager ConfirmDialog, to read what they would show
vi.mock("@/components/LazyConfirmDialog", async () => ({ LazyConfirmDialog: (await import("@/components/ConfirmDialog")).ConfirmDialog }));

/** Server-rendered, lazy parts resolved: no call is made, so the client's URL is never used. */
async function render(permissions: ActionPermissions | undefined, unit = running, gpuWait: GpuWaitItem[] = []) {
  const queryClient = new QueryClient();
  const trpcClient = createTRPCClient<PanelRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: wireTransformer })] });
  const { prelude } = await prerender(
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <UnitActions
          host="gpu-a"
          name="vllm.service"
          unit={unit}
          permissions={permissions}
          recent={null}
          activeEnterUsec={undefined}
          gpu={noGpu}
          gpuWait={gpuWait}
        />
      </TRPCProvider>
    </QueryClientProvider>,
  );
  return new Response(prelude).text();
}

/** The action buttons: every button outside the (closed) confirm dialogs. */
const buttons = (html: string) =>
  [...html.replace(/<dialog[\s\S]*?<\/dialog>/g, "").matchAll(/<button type="button"[^>]*>([^<]*)<\/button>/g)].map((m) => m[1]);

describe("UnitActions", () => {
  it("shows the applicable actions in order, in one labelled group", async () => {
    const html = await render(everything);
    expect(html).toContain('role="group" aria-label="Unit actions"');
    expect(buttons(html)).toEqual(["Stop", "Restart", "Kill (SIGKILL)"]);
  });

  it("says why refused actions have no button", async () => {
    const html = await render({ ...everything, kill: { allowed: false, reason: "admins only" } });
    expect(buttons(html)).toEqual(["Stop", "Restart"]);
    expect(html).toContain("Kill (SIGKILL): admins only");
  });

  it("has no group for someone who may do nothing (the confirm dialogs stay, closed)", async () => {
    const refused = { allowed: false, reason: "viewers cannot change units" } as const;
    const html = await render({ start: refused, stop: refused, restart: refused, "reset-failed": refused, kill: refused });
    expect(html).not.toContain('role="group"');
    expect(buttons(html)).toEqual([]);
    expect(html.match(/<dialog/g)).toHaveLength(3); // stop, restart, kill ask first
  });

  it("shows no button and no refusal before units.get answers", async () => {
    const html = await render(undefined);
    expect(html).not.toContain('role="group"');
    expect(html).not.toContain("text-xs text-zinc-500");
  });

  it("gives each confirm dialog its own title", async () => {
    const html = await render(everything);
    const labelledBy = [...html.matchAll(/<dialog[^>]*aria-labelledby="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(labelledBy).size).toBe(3);
    expect(html).toContain("Restart vllm.service?");
  });

  it("offers 'Restart when its GPUs are free' in the restart dialog only where the unit holds GPU memory, with what it would wait for", async () => {
    const plain = await render(everything);
    expect(plain).not.toContain("Restart when its GPUs are free");
    const held: GpuWaitItem[] = [
      { uuid: "GPU-0", index: 0, heldMiB: 76_800, pids: [], exitedPids: [4111], unknownPids: [] },
      { uuid: "GPU-1", index: 1, heldMiB: 76_800, pids: [4112], exitedPids: [], unknownPids: [] },
    ];
    const html = await render(everything, running, held);
    const restartDialog = [...html.matchAll(/<dialog[\s\S]*?<\/dialog>/g)].map((m) => m[0]).find((d) => d.includes("Restart vllm.service?"))!;
    expect(restartDialog).toContain(">Restart when its GPUs are free</button>");
    expect(restartDialog).toContain("GPU 0: 75.0 GiB by exited 4111");
    expect(restartDialog).toContain("GPU 1: 75.0 GiB by PID 4112");
    expect(restartDialog).toContain("150 GiB");
    // a killed run's memory is still held (exited 4111): the GPU-aware restart is the primary button
    expect(restartDialog).toMatch(/<button type="submit"[^>]*>Restart when its GPUs are free<\/button>/);
    expect(restartDialog).toMatch(/<button type="button"[^>]*>Restart vllm.service<\/button>/);
    expect(restartDialog).toContain("a plain restart would start it on GPUs that are still full");
  });

  it("where only live processes hold the memory, the plain restart stays the dialog's primary button", async () => {
    const live: GpuWaitItem[] = [{ uuid: "GPU-1", index: 1, heldMiB: 76_800, pids: [4112], exitedPids: [], unknownPids: [] }];
    const restartDialog = [...(await render(everything, running, live)).matchAll(/<dialog[\s\S]*?<\/dialog>/g)]
      .map((m) => m[0])
      .find((d) => d.includes("Restart vllm.service?"))!;
    expect(restartDialog).toMatch(/<button type="submit"[^>]*>Restart vllm.service<\/button>/);
    expect(restartDialog).toMatch(/<button type="button"[^>]*>Restart when its GPUs are free<\/button>/);
    expect(restartDialog).not.toContain("still full");
  });
});
