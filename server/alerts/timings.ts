/** How delivery paces itself (defaults; GPUDECK_ALERT_RETRY_HOURS and GPUDECK_ALERT_RATE_PER_MINUTE change two). */
export interface DeliveryTimings {
  /** how often the outbox is looked at when nothing kicks it */
  pollMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  giveUpAfterMs: number;
  ratePerMinute: number;
  /** how long a claim holds (longer than any send's timeout) */
  leaseMs: number;
}

export const DEFAULT_DELIVERY: DeliveryTimings = {
  pollMs: 1000,
  backoffBaseMs: 10_000,
  backoffMaxMs: 10 * 60_000,
  giveUpAfterMs: 24 * 3_600_000,
  ratePerMinute: 30,
  leaseMs: 60_000,
};
