/**
 * A logger for retry loops: the first line of a failure is logged, identical repeats are
 * counted instead of logged, and a reminder goes out at most every `everyMs`. While systemd
 * or nvidia-smi stay unreachable for hours, the journal gets a line a minute, not one every
 * backoff period.
 */
export interface QuietLog {
  /** Log `message` unless `key` repeats the previous call's key within the quiet period. */
  repeat(key: string, message: string): void;
  /** The failure is over: forget the key (and say how many repeats were not logged). */
  recovered(message?: string): void;
}

export function quietLog(log: (message: string) => void, opts: { everyMs?: number; now?: () => number } = {}): QuietLog {
  const everyMs = opts.everyMs ?? 60_000;
  const now = opts.now ?? Date.now;
  let lastKey: string | null = null;
  let lastAt = 0;
  let quieted = 0;
  const note = () => (quieted > 0 ? ` (${quieted} repeat${quieted === 1 ? "" : "s"} not logged)` : "");
  return {
    repeat(key, message) {
      const t = now();
      if (key === lastKey && t - lastAt < everyMs) {
        quieted++;
        return;
      }
      log(key === lastKey ? `${message}${note()}` : message);
      lastKey = key;
      lastAt = t;
      quieted = 0;
    },
    recovered(message) {
      if (lastKey === null) return;
      if (message) log(`${message}${note()}`);
      lastKey = null;
      quieted = 0;
    },
  };
}
