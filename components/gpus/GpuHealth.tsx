/** A GPU card's health line: why its clocks are held down, ECC errors, and how many Xid faults hit it (linking to the list). */
import type { GpuReading } from "@/server/contract/types";
import { eccText, throttleText, type HealthTone } from "./gpuHealthText";

const TONE_CLASS: Record<HealthTone, string> = {
  ok: "",
  unknown: "text-zinc-500 dark:text-zinc-400",
  warn: "font-semibold text-amber-800 dark:text-amber-300",
  bad: "font-semibold text-red-800 dark:text-red-300",
};

export function GpuHealth({ gpu: g, faults }: { gpu: GpuReading; faults: number }) {
  const clocks = throttleText(g.throttleReasons);
  const ecc = eccText(g.eccCorrectedVolatile, g.eccUncorrectedVolatile);
  return (
    <dl className="mt-1 flex flex-wrap gap-x-5 gap-y-1 text-xs" data-testid="gpu-health">
      <div>
        <dt className="inline text-zinc-500 dark:text-zinc-400">clocks </dt>
        <dd className={`inline ${TONE_CLASS[clocks.tone]}`}>{clocks.text}</dd>
      </div>
      <div>
        <dt className="inline text-zinc-500 dark:text-zinc-400">ECC </dt>
        <dd className={`inline ${TONE_CLASS[ecc.tone]}`}>{ecc.text}</dd>
      </div>
      {faults > 0 && (
        <div>
          <dt className="inline text-zinc-500 dark:text-zinc-400">faults </dt>
          <dd className="inline font-semibold text-red-800 dark:text-red-300">
            <a href="#faults-heading" className="underline">
              {faults} Xid {faults === 1 ? "error" : "errors"}
            </a>
          </dd>
        </div>
      )}
    </dl>
  );
}
