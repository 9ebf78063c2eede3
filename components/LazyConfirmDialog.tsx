"use client";
/**
 * ConfirmDialog, loaded the first time it opens: a page with a dialog per action (the unit page
 * has six) does not download them, nor what they show (pass lazy children), until someone asks.
 * Once opened it stays mounted, so closing returns focus to its opener as ConfirmDialog does.
 * Opening waits for its code: the dialog shows whole, not half drawn.
 */
import { lazy, Suspense, useState, type ComponentProps } from "react";
import type { ConfirmDialog as EagerConfirmDialog } from "./ConfirmDialog";

const ConfirmDialog = lazy(() => import("./ConfirmDialog").then((m) => ({ default: m.ConfirmDialog })));

export function LazyConfirmDialog(props: ComponentProps<typeof EagerConfirmDialog>) {
  const [wanted, setWanted] = useState(props.open);
  if (props.open && !wanted) setWanted(true);
  if (!wanted) return null;
  return (
    <Suspense fallback={null}>
      <ConfirmDialog {...props} />
    </Suspense>
  );
}
