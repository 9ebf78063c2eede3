"use client";
/**
 * Keyboard focus that never falls to the page's body: a dialog's Tab cycle, where focus goes when
 * a dialog closes, and a rescue for the control that disappears (or is disabled) under the user's
 * keyboard — after Kill its button goes once the unit is dead; a pending action's button is
 * disabled; an operation's Cancel button goes once it is canceled.
 */
import { useEffect, useRef, type RefObject } from "react";

const FOCUSABLE = 'button, [href], input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';

/** Whether an element can hold keyboard focus now: attached, enabled, rendered, not inert or in a closed dialog. */
export function canHoldFocus(el: Element | null | undefined): el is HTMLElement {
  if (!(el instanceof HTMLElement) || !el.isConnected) return false;
  if ((el as HTMLButtonElement).disabled || el.closest("[inert]")) return false;
  const dialog = el.closest("dialog");
  if (dialog && !dialog.open) return false;
  return el.getClientRects().length > 0;
}

/** The controls Tab reaches inside `root`, in order. */
export function tabbables(root: ParentNode): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.tabIndex >= 0 && canHoldFocus(el));
}

/**
 * Tab on the last control goes to the first, Shift+Tab on the first to the last: focus stays in
 * `root` (a modal's inert background alone would let it leave to the browser's own controls).
 * Returns whether it moved focus.
 */
export function trapTab(e: { key: string; shiftKey: boolean; preventDefault(): void }, root: HTMLElement): boolean {
  if (e.key !== "Tab") return false;
  const items = tabbables(root);
  if (items.length === 0) return false;
  const first = items[0]!;
  const last = items[items.length - 1]!;
  const active = document.activeElement;
  const outside = !active || !root.contains(active);
  if (e.shiftKey ? active === first || outside : active === last || outside) {
    e.preventDefault();
    (e.shiftKey ? last : first).focus();
    return true;
  }
  return false;
}

/**
 * While the keyboard is inside `container`: when the focused control goes away (removed,
 * disabled, hidden, or its dialog closed) and focus falls to the body, move it to `fallback()`
 * (e.g. the status that replaced the control), else to the first control left in the container.
 * A click elsewhere on the page (focus on the body, the control still there) is left alone.
 */
export function useFocusRescue(container: RefObject<HTMLElement | null>, fallback: (root: HTMLElement) => HTMLElement | null | undefined): void {
  // the latest fallback, without re-attaching (that would drop the mutations not yet seen)
  const fallbackRef = useRef(fallback);
  useEffect(() => {
    fallbackRef.current = fallback;
  });
  useEffect(() => {
    const root = container.current;
    if (!root) return;
    let last: HTMLElement | null = null;
    const check = () => {
      if (!last) return;
      const active = document.activeElement;
      if (active && active !== document.body && active !== last) {
        if (!root.contains(active)) last = null;
        return;
      }
      if (canHoldFocus(last)) {
        if (active !== last) last = null; // focus left on purpose
        return;
      }
      const target = [fallbackRef.current(root), ...tabbables(root)].find(canHoldFocus);
      // nothing to take it yet (the status renders next): try again on the next change
      if (target) target.focus();
    };
    const onFocus = (e: FocusEvent) => {
      last = e.target instanceof HTMLElement ? e.target : null;
    };
    const onBlur = () => setTimeout(check, 0);
    const observer = new MutationObserver(check);
    observer.observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "open", "hidden", "class", "inert"] });
    // capture: focus and blur reach the container on their way down (not every DOM fires focusin)
    root.addEventListener("focus", onFocus, true);
    root.addEventListener("blur", onBlur, true);
    return () => {
      observer.disconnect();
      root.removeEventListener("focus", onFocus, true);
      root.removeEventListener("blur", onBlur, true);
    };
  }, [container]);
}
