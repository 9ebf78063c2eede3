// @vitest-environment happy-dom
/**
 * Stop the loop is downloaded only when needed: nothing while the unit is not in a loop, the
 * button once it is, and the dialog open at once when the diagnosis asks for it first.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { act, createRef } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mount, type Mounted } from "@/components/timeline/domTestKit";
import { TRPCProvider } from "@/components/trpc";
import type { UnitSummary } from "@/server/contract/types";
import { wireTransformer } from "@/server/contract/wire";
import type { PanelRouter } from "@/server/panel/router";
import { LazyStopLoopAction } from "./LazyStopLoopAction";
import type { StopLoopHandle } from "./StopLoopAction";

// the dialog as a plain element (its own lazy loading is LazyConfirmDialog.test.tsx's)
vi.mock("@/components/LazyConfirmDialog", () => ({
  LazyConfirmDialog: ({ open, title }: { open: boolean; title: string }) => (open ? <div role="dialog">{title}</div> : null),
}));

const unit: UnitSummary = {
  name: "vllm.service",
  description: "vLLM",
  activeState: "activating",
  subState: "auto-restart",
  loadState: "loaded",
  unitFileState: "enabled",
  result: "exit-code",
  mainPid: 0,
  controlPid: 0,
  nRestarts: 7,
  stateChangeUsec: 0,
  job: null,
};

const LOOP: NonNullable<UnitSummary["crashLoop"]> = { restarts: 7, windowMs: 600_000, rule: "5/10m", firstAtUsec: 1, lastAtUsec: 2, startLimitStops: false };

let m: Mounted | undefined;
afterEach(() => {
  m?.unmount();
  m = undefined;
});

function tree(u: UnitSummary, ref?: React.Ref<StopLoopHandle>) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  // the evidence is asked for once the dialog is open: no panel here, so it fails (quietly)
  const offline = () => Promise.reject(new Error("no panel in this test"));
  const trpcClient = createTRPCClient<PanelRouter>({
    links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: wireTransformer, fetch: offline })],
  });
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <LazyStopLoopAction ref={ref} host="gpu-a" name="vllm.service" unit={u} permission={{ allowed: true }} />
      </TRPCProvider>
    </QueryClientProvider>
  );
}

const settle = () => act(async () => void (await import("./StopLoopAction")));

describe("LazyStopLoopAction", () => {
  it("draws nothing while the unit is not in a loop", async () => {
    m = mount(tree(unit));
    await settle();
    expect(m.container.textContent).toBe("");
  });

  it("shows Stop the loop once the unit restarts in a loop", async () => {
    m = mount(tree({ ...unit, crashLoop: LOOP }));
    await vi.waitFor(async () => {
      await settle();
      expect(m!.container.querySelector("button")?.textContent).toBe("Stop the loop");
    });
  });

  it("opens its dialog at once when asked for before its code was here", async () => {
    const ref = createRef<StopLoopHandle>();
    m = mount(tree(unit, ref));
    act(() => ref.current!.request());
    await vi.waitFor(async () => {
      await settle();
      expect(m!.container.querySelector('[role="dialog"]')?.textContent).toBe("Stop the loop of vllm.service?");
    });
  });
});
