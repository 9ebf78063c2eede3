"use client";
/**
 * OperationProgress, downloaded when a GPU-aware restart is under way (rarely when a page opens):
 * the unit page's JavaScript budget (bench/route-js.ts). Its own Suspense boundary: the rest of
 * the action bar never waits for it.
 */
import { lazy, Suspense, type ComponentProps } from "react";
import type { OperationProgress as EagerOperationProgress } from "./OperationProgress";

const OperationProgress = lazy(() => import("./OperationProgress").then((m) => ({ default: m.OperationProgress })));

export function LazyOperationProgress(props: ComponentProps<typeof EagerOperationProgress>) {
  return (
    <Suspense fallback={null}>
      <OperationProgress {...props} />
    </Suspense>
  );
}
