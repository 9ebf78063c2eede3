"use client";
/**
 * Overview GPU strip: one bar per GPU, used / total, split into the units holding it (colour
 * per unit, stable across pages), a hatched part for memory held by processes that already
 * exited, and the rest. Values are written out as text; the bars are decoration for sighted
 * users and carry a full description for screen readers.
 */
import type { CSSProperties } from "react";
import type { GpuAttributed } from "@/server/contract/types";
import { formatMiB, formatUsedOfTotal } from "@/server/contract/format";
import { miBText, stripModel, unitColor, unitTextColor, type GpuStripModel, type StripPart } from "./strip";

export interface GpuStripProps {
  /** GPUs of the latest sample (GpuSample.gpus) */
  gpus: readonly GpuAttributed[];
  /** outline this unit's parts (e.g. the row hovered in the unit list) */
  highlightUnit?: string | null;
  /** link target for a unit, e.g. (u) => `/units/${encodeURIComponent(u)}` */
  unitHref?: (unit: string) => string;
  className?: string;
}

/** Inside-the-bar labels only where they fit (~70 px on a phone). */
const INSIDE_LABEL_MIN_FRACTION = 0.18;

function partName(p: StripPart): string {
  if (p.kind === "unit") return p.unit!;
  if (p.kind === "exited") return "held by exited process";
  return p.unattributedMiB > 0 && p.holders.length > 0 ? "outside units / unattributed" : p.holders.length > 0 ? "outside units" : "unattributed";
}

function partDetail(p: StripPart): string {
  if (p.kind === "exited") {
    return p.holders.map((h) => `PID ${h.pid}${h.unit ? ` (was ${h.unit})` : ""} ${miBText(h)}`).join(", ");
  }
  if (p.kind === "outside") {
    const procs = p.holders.map((h) => `PID ${h.pid} ${h.processName} ${miBText(h)}`);
    if (p.unattributedMiB > 0) procs.push(`${formatMiB(p.unattributedMiB)} not attributed to any listed process`);
    return procs.join(", ");
  }
  return p.holders.map((h) => `PID ${h.pid} ${miBText(h)}`).join(", ");
}

function gpuTitle(m: GpuStripModel): string {
  return `GPU ${m.index ?? "?"}`;
}

function describe(m: GpuStripModel): string {
  const head = m.notReported
    ? `${gpuTitle(m)} (${m.name}): memory not reported`
    : `${gpuTitle(m)} (${m.name}): ${formatUsedOfTotal(m.usedMiB, m.totalMiB)} used`;
  const parts = m.parts.map((p) => `${partName(p)} ${miBText(p)}${p.kind === "exited" ? ` (${partDetail(p)})` : ""}`);
  if (m.freeMiB != null) parts.push(`${formatMiB(m.freeMiB)} free`);
  return parts.length ? `${head}; ${parts.join("; ")}.` : `${head}.`;
}

function partStyle(p: StripPart): { className: string; style: CSSProperties } {
  if (p.kind === "unit") return { className: "", style: { background: unitColor(p.unit!), color: unitTextColor(p.unit!) } };
  if (p.kind === "exited") return { className: "gd-mem-exited", style: { color: "#ffffff", textShadow: "0 0 2px #000, 0 0 2px #000" } };
  return { className: "", style: { background: "var(--gd-mem-outside)", color: "var(--gd-surface-fg)" } };
}

export function GpuStrip({ gpus, highlightUnit = null, unitHref, className }: GpuStripProps) {
  const models = gpus.map(stripModel).sort((a, b) => (a.index ?? Infinity) - (b.index ?? Infinity) || a.uuid.localeCompare(b.uuid));
  if (models.length === 0) {
    return <p className={`text-sm text-[var(--gd-surface-muted)] ${className ?? ""}`}>No GPUs reported.</p>;
  }
  return (
    <ul className={`flex flex-col gap-3 ${className ?? ""}`} aria-label="GPU memory by holder">
      {models.map((m) => (
        <li key={m.uuid} className="flex flex-col gap-1">
          <div className="flex flex-wrap items-baseline justify-between gap-x-2 text-sm">
            <span className="font-semibold">
              {gpuTitle(m)} <span className="font-normal">·</span>{" "}
              <span className="font-mono tabular-nums font-normal">{m.notReported ? "memory not reported" : formatUsedOfTotal(m.usedMiB, m.totalMiB)}</span>
            </span>
            <span className="truncate text-xs text-[var(--gd-surface-muted)]" title={m.uuid}>
              {m.name}
            </span>
          </div>

          {m.totalMiB != null ? (
            <div
              role="img"
              aria-label={describe(m)}
              className="flex h-6 w-full overflow-hidden rounded-md border border-[var(--gd-border)]"
              style={{ background: "var(--gd-mem-free)" }}
            >
              {m.parts.map((p, i) => {
                const { className: cls, style } = partStyle(p);
                const highlighted = highlightUnit != null && p.kind === "unit" && p.unit === highlightUnit;
                return (
                  <div
                    key={`${p.kind}-${p.unit ?? i}`}
                    className={`flex h-full min-w-0 items-center overflow-hidden px-1 text-[11px] leading-none font-semibold whitespace-nowrap ${cls}`}
                    style={{
                      ...style,
                      width: `${(p.fraction * 100).toFixed(3)}%`,
                      // hairline between neighbours so equal colours stay apart
                      boxShadow: `inset -1px 0 0 var(--gd-surface)${highlighted ? ", inset 0 0 0 2px var(--gd-focus)" : ""}`,
                    }}
                    title={`${partName(p)}: ${miBText(p)} — ${partDetail(p)}`}
                  >
                    {p.fraction >= INSIDE_LABEL_MIN_FRACTION && (
                      <span className="truncate" aria-hidden="true">
                        {p.kind === "unit" ? p.unit : partName(p)}
                      </span>
                    )}
                  </div>
                );
              })}
            </div>
          ) : (
            <p role="note" className="rounded-md border border-dashed border-[var(--gd-border)] px-2 py-1 text-xs text-[var(--gd-surface-muted)]">
              {m.notReported
                ? "This GPU shares system memory (unified memory): no GPU memory total or use of its own; the host's memory pool and per-process use are shown instead."
                : "Total memory not reported."}
            </p>
          )}

          {m.parts.length > 0 && (
            <ul className="flex flex-wrap gap-x-3 gap-y-0.5 text-xs" aria-label={`${gpuTitle(m)} holders`}>
              {m.parts.map((p, i) => {
                const { className: cls, style } = partStyle(p);
                const name = partName(p);
                return (
                  <li key={`${p.kind}-${p.unit ?? i}`} className="flex min-w-0 items-center gap-1" title={partDetail(p)}>
                    <span aria-hidden="true" className={`inline-block h-2.5 w-3.5 shrink-0 rounded-sm ${cls}`} style={{ background: style.background }} />
                    {p.kind === "unit" && unitHref ? (
                      <a className="truncate underline-offset-2 hover:underline" href={unitHref(p.unit!)}>
                        {name}
                      </a>
                    ) : (
                      <span className="truncate">{name}</span>
                    )}
                    <span className="font-mono tabular-nums text-[var(--gd-surface-muted)]">{miBText(p)}</span>
                    {p.kind === "exited" && <span className="sr-only">{`: ${partDetail(p)}`}</span>}
                  </li>
                );
              })}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}

export default GpuStrip;
