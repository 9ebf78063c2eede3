"use client";
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { canHoldFocus, trapTab } from "./focus";

/**
 * A modal confirm built on <dialog>: Tab and Shift+Tab cycle inside it, Escape cancels, and on
 * closing focus returns to the control that opened it (while that can still hold it: a pending
 * action's button is disabled, and the page's focus rescue takes over). A page may hold several (one
 * per action). An `alternative` is a second way to confirm (e.g. "Restart when its GPUs are free"
 * beside "Restart"), with the same reason; `focusAlternative` starts on it instead;
 * `preferAlternative` makes it the primary button (filled, Enter confirms it) and the plain
 * confirm the secondary one.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  danger?: boolean;
  children: ReactNode;
  onConfirm: (reason: string) => void;
  onCancel: () => void;
  alternative?: { label: string; onConfirm: (reason: string) => void } | null;
  focusAlternative?: boolean;
  preferAlternative?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const alternativeRef = useRef<HTMLButtonElement>(null);
  const { focusAlternative } = props;
  const titleId = useId();
  // the primary (submit) button and the secondary one; swapped when the alternative is preferred
  const alt = props.alternative ?? null;
  const swap = alt !== null && props.preferAlternative === true;
  const primary = swap ? { label: alt.label, onConfirm: alt.onConfirm } : { label: props.confirmLabel, onConfirm: props.onConfirm };
  const secondary = !alt ? null : swap ? { label: props.confirmLabel, onConfirm: props.onConfirm } : alt;
  const [reason, setReason] = useState("");
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      setReason("");
      opener.current = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
      d.showModal();
      if (focusAlternative) alternativeRef.current?.focus(); // the ref is on whichever button the alternative is
    }
    if (!props.open && d.open) {
      d.close();
      if (canHoldFocus(opener.current)) opener.current.focus();
      opener.current = null;
    }
  }, [props.open, focusAlternative]);
  return (
    <dialog
      ref={ref}
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
      onKeyDown={(e) => {
        if (ref.current) trapTab(e, ref.current);
      }}
      aria-labelledby={titleId}
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-xl border border-zinc-300 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-black/50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
    >
      <form
        method="dialog"
        className="space-y-4 p-5"
        onSubmit={(e) => {
          e.preventDefault();
          primary.onConfirm(reason.trim());
        }}
      >
        <h2 id={titleId} className="text-lg font-semibold">
          {props.title}
        </h2>
        <div className="space-y-2 text-sm">{props.children}</div>
        <label className="block text-sm">
          <span className="mb-1 block font-medium">Reason (optional, recorded in the audit log)</span>
          <input
            name="reason"
            value={reason}
            maxLength={500}
            onChange={(e) => setReason(e.target.value)}
            placeholder="e.g. OOM after config change, INC-2231"
            className="w-full rounded-md border border-zinc-300 bg-white px-2 py-2 dark:border-zinc-700 dark:bg-zinc-950"
          />
        </label>
        <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
          <button type="button" onClick={props.onCancel} className="rounded-md border border-zinc-300 px-4 py-2.5 text-sm font-medium dark:border-zinc-700">
            Cancel
          </button>
          {secondary && (
            <button
              ref={swap ? undefined : alternativeRef}
              type="button"
              onClick={() => secondary.onConfirm(reason.trim())}
              className="rounded-md border-2 border-blue-700 bg-white px-4 py-2.5 text-sm font-semibold text-blue-800 hover:bg-blue-50 dark:bg-zinc-900 dark:text-blue-300"
            >
              {secondary.label}
            </button>
          )}
          <button
            ref={swap ? alternativeRef : undefined}
            type="submit"
            autoFocus={swap || !(alt && props.focusAlternative)}
            className={`rounded-md px-4 py-2.5 text-sm font-semibold text-white ${props.danger ? "bg-red-700 hover:bg-red-800" : "bg-blue-700 hover:bg-blue-800"}`}
          >
            {primary.label}
          </button>
        </div>
      </form>
    </dialog>
  );
}
