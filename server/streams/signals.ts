/**
 * One way to combine abort signals. `dispose` must run when the stream ends: a process-wide
 * signal (the agent's or the panel's shutdown) lives as long as the process, and a listener left
 * on it per stream would pile up with every browser reconnect (AbortSignal.any keeps its sources
 * referenced the same way, so it is not used).
 */
export interface LinkedSignal {
  signal: AbortSignal;
  dispose(): void;
}

/** A signal that aborts when any of `signals` does. */
export function linkSignals(...signals: (AbortSignal | undefined)[]): LinkedSignal {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort();
  const attached: AbortSignal[] = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) ctl.abort();
    else {
      s.addEventListener("abort", onAbort, { once: true });
      attached.push(s);
    }
  }
  return {
    signal: ctl.signal,
    dispose: () => {
      for (const s of attached) s.removeEventListener("abort", onAbort);
    },
  };
}
