"use client";
/**
 * StopLoopAction, downloaded only when it is needed: while the unit restarts in a loop, or when
 * the diagnosis asks for it (then it opens as soon as its code is here). Once shown it stays, so
 * the line saying what was sent outlives the loop. Same props and handle as StopLoopAction.
 */
import { lazy, Suspense, useImperativeHandle, useRef, useState, type ComponentProps } from "react";
import type { StopLoopAction as StopLoopActionType, StopLoopHandle } from "./StopLoopAction";

const StopLoopAction = lazy(() => import("./StopLoopAction").then((m) => ({ default: m.StopLoopAction })));

export function LazyStopLoopAction({ ref, ...props }: ComponentProps<typeof StopLoopActionType>) {
  const inner = useRef<StopLoopHandle>(null);
  const [wanted, setWanted] = useState(false);
  const [openAtOnce, setOpenAtOnce] = useState(false);
  const looping = props.unit.crashLoop != null;
  // remembered once seen (React's "state from props" pattern: set while rendering, not in an effect)
  if (looping && !wanted) setWanted(true);
  useImperativeHandle(ref, () => ({
    request: () => {
      if (inner.current) inner.current.request();
      else {
        setOpenAtOnce(true);
        setWanted(true);
      }
    },
  }));
  if (!wanted && !looping) return null;
  return (
    <Suspense fallback={null}>
      <StopLoopAction ref={inner} {...props} initiallyOpen={openAtOnce} />
    </Suspense>
  );
}
