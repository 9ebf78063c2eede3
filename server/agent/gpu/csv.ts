/**
 * Parsing of `nvidia-smi --query-… --format=csv[,noheader][,nounits]` output.
 *
 * nvidia-smi is not a stable API (its man page says so): columns are found by the header's
 * names, never by position; aliases are printed under their canonical name; ` [MiB]`-style
 * unit suffixes ride on the header even with `nounits`; any cell that is not a number is
 * "no sample" (null), never 0; nothing is quoted, so a process name may contain `, ` and
 * compute-app rows are split from both ends.
 */
import type { ComputeApp, GpuReading } from "../../contract/types";
import { parseEccCount, parseThrottleReasons } from "./health";

// ---------------------------------------------------------------------------------------
// Columns

/** The --query-gpu fields the sampler asks for, in the order it asks. */
export const GPU_QUERY_FIELDS = [
  "index",
  "uuid",
  "name",
  "pci.bus_id",
  "memory.total",
  "memory.used",
  "utilization.gpu",
  "temperature.gpu",
  "power.draw",
  // issue 24: lanes under the memory chart (each optional: a driver that rejects one loses only it)
  "utilization.memory",
  "power.limit",
  "clocks.sm",
  "clocks.max.sm",
] as const;

/** The --query-compute-apps fields the sampler asks for. */
export const COMPUTE_APP_QUERY_FIELDS = ["gpu_uuid", "pid", "process_name", "used_memory"] as const;

/**
 * Alias → canonical name for --query-gpu. nvidia-smi prints the canonical name in the header
 * whatever the query said (`gpu_name` → `name`). Newer drivers split `power.draw` into
 * `.average`/`.instant`; either stands in for it when plain `power.draw` is absent.
 */
const GPU_COLUMN_ALIASES: Record<string, string> = {
  gpu_name: "name",
  gpu_uuid: "uuid",
  gpu_serial: "serial",
  gpu_bus_id: "pci.bus_id",
  "pci.busid": "pci.bus_id",
  "utilization.gpu_util": "utilization.gpu",
  "temperature.gpu.current": "temperature.gpu",
  "clocks.current.sm": "clocks.sm",
  "clocks.max.streaming_multiprocessor": "clocks.max.sm",
  // drivers before 535 (and their headers) use the old name
  "clocks_throttle_reasons.active": "clocks_event_reasons.active",
};

/** Alias → canonical name for --query-compute-apps (`used_memory` prints as `used_gpu_memory`). */
const APP_COLUMN_ALIASES: Record<string, string> = {
  used_memory: "used_gpu_memory",
  name: "process_name",
  uuid: "gpu_uuid",
};

/**
 * Header cell → canonical column name: trims, drops a trailing ` [unit]` (`memory.used [MiB]`,
 * `utilization.gpu [%]`, `power.draw [W]`), lower-cases, maps aliases.
 */
export function canonicalColumn(headerCell: string, kind: "gpu" | "app" = "gpu"): string {
  const bare = headerCell
    .trim()
    .replace(/\s*\[[^\]]*\]\s*$/, "")
    .trim()
    .toLowerCase();
  const aliases = kind === "gpu" ? GPU_COLUMN_ALIASES : APP_COLUMN_ALIASES;
  return aliases[bare] ?? bare;
}

/** Splits a CSV line on nvidia-smi's separator (`, `; a bare `,` is accepted too). */
export function splitCsvLine(line: string): string[] {
  return line.split(",").map((cell) => cell.trim());
}

/** Field names look like `memory.used`, `pci.bus_id`, `clocks_event_reasons.active`. */
const FIELD_NAME_RE = /^[a-z][a-z0-9_.]*(\s*\[[^\]]*\])?$/i;

/**
 * A line is a header when every cell looks like a field name and, once canonical, it names
 * the key column (`uuid` for GPUs, `pid` for apps). Data rows carry `GPU-…` UUIDs and
 * numbers, so they never qualify.
 */
export function parseHeaderLine(line: string, kind: "gpu" | "app"): string[] | null {
  const trimmed = line.trim();
  if (trimmed === "") return null;
  const cells = splitCsvLine(trimmed);
  if (!cells.every((c) => FIELD_NAME_RE.test(c))) return null;
  const columns = cells.map((c) => canonicalColumn(c, kind));
  const key = kind === "gpu" ? "uuid" : "pid";
  return columns.includes(key) ? columns : null;
}

// ---------------------------------------------------------------------------------------
// Cells

/**
 * Texts nvidia-smi prints instead of a value. Anything not a number is treated as no sample
 * anyway; this list exists so tests (and readers) know what to expect.
 */
export const NOT_A_NUMBER_CELLS = [
  "[N/A]",
  "N/A",
  "[Not Supported]",
  "[Unknown Error]",
  "[Insufficient Permissions]",
  "[Requested functionality has been deprecated]",
  "[Function Not Found]",
  "[Not Found]",
  "[GPU requires reset]",
  "[GPU is lost]",
  "",
] as const;

// A number, optionally followed by the unit nvidia-smi prints without `nounits`.
const NUMBER_CELL_RE = /^(-?\d+(?:\.\d+)?)(?:\s*(?:MiB|%|W|C|MHz|GiB|KiB|B))?$/;

/** A cell as a number, or null when it is not one (`[N/A]`, `[Not Supported]`, empty …). */
export function parseNumberCell(cell: string | undefined): number | null {
  if (cell === undefined) return null;
  const m = NUMBER_CELL_RE.exec(cell.trim());
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : null;
}

/** A text cell, or "" when it is one of nvidia-smi's placeholders. */
export function parseTextCell(cell: string | undefined): string {
  if (cell === undefined) return "";
  const t = cell.trim();
  return isPlaceholder(t) ? "" : t;
}

function isPlaceholder(t: string): boolean {
  return t === "" || t === "N/A" || /^\[[^\]]*\]$/.test(t);
}

// ---------------------------------------------------------------------------------------
// GPU rows

/** Maps canonical column name → position, for one header. */
export interface ColumnIndex {
  columns: string[];
  at(name: string): number; // -1 when absent
}

export function columnIndex(columns: string[]): ColumnIndex {
  const positions = new Map<string, number>();
  columns.forEach((c, i) => {
    if (!positions.has(c)) positions.set(c, i);
  });
  return { columns, at: (name) => positions.get(name) ?? -1 };
}

/**
 * One --query-gpu data row → reading, or null when the line is not a GPU row (stray text,
 * an error message, a row without a UUID).
 */
export function parseGpuRow(line: string, index: ColumnIndex): GpuReading | null {
  const trimmed = line.trim();
  if (trimmed === "") return null;
  const cells = splitCsvLine(trimmed);
  // A GPU name never contains a comma in practice, so the cell count must match the header.
  if (cells.length !== index.columns.length) return null;
  const cell = (name: string): string | undefined => {
    const i = index.at(name);
    return i < 0 ? undefined : cells[i];
  };
  const uuid = parseTextCell(cell("uuid"));
  if (!/^(GPU|MIG)-[0-9A-Za-z-]+$/.test(uuid)) return null;
  const indexNumber = parseNumberCell(cell("index"));
  const optionalNumber = <K extends string>(key: K, column: string): Partial<Record<K, number | null>> =>
    index.at(column) >= 0 ? ({ [key]: parseNumberCell(cell(column)) } as Record<K, number | null>) : {};
  const power = index.at("power.draw") >= 0 ? parseNumberCell(cell("power.draw")) : parseNumberCell(cell("power.draw.instant") ?? cell("power.draw.average"));
  return {
    uuid,
    index: indexNumber === null ? null : Math.trunc(indexNumber),
    name: parseTextCell(cell("name")),
    pciBusId: parseTextCell(cell("pci.bus_id")),
    memoryTotalMiB: parseNumberCell(cell("memory.total")),
    memoryUsedMiB: parseNumberCell(cell("memory.used")),
    utilizationPct: parseNumberCell(cell("utilization.gpu")),
    temperatureC: parseNumberCell(cell("temperature.gpu")),
    powerW: power,
    // telemetry beyond the first three, and health fields, only when queried, so a reading without them has no such keys
    ...optionalNumber("memoryUtilizationPct", "utilization.memory"),
    ...optionalNumber("powerLimitW", "power.limit"),
    ...optionalNumber("smClockMHz", "clocks.sm"),
    ...optionalNumber("smClockMaxMHz", "clocks.max.sm"),
    // health fields only when queried (./health.ts), so a reading without them has no such keys
    ...(index.at("clocks_event_reasons.active") >= 0 ? { throttleReasons: parseThrottleReasons(cell("clocks_event_reasons.active")) } : {}),
    ...(index.at("ecc.errors.corrected.volatile.total") >= 0 ? { eccCorrectedVolatile: parseEccCount(cell("ecc.errors.corrected.volatile.total")) } : {}),
    ...(index.at("ecc.errors.uncorrected.volatile.total") >= 0 ? { eccUncorrectedVolatile: parseEccCount(cell("ecc.errors.uncorrected.volatile.total")) } : {}),
  };
}

export interface ParsedGpuCsv {
  gpus: GpuReading[];
  /** Lines that were neither the header nor a GPU row (error texts, warnings). */
  strayLines: string[];
}

/**
 * A whole --query-gpu output. With `noheader`, pass the columns the query asked for as
 * `assumedColumns` (the header, when present, always wins).
 */
export function parseGpuCsv(text: string, assumedColumns?: readonly string[]): ParsedGpuCsv {
  let index: ColumnIndex | null = assumedColumns ? columnIndex(assumedColumns.map((c) => canonicalColumn(c, "gpu"))) : null;
  const gpus: GpuReading[] = [];
  const strayLines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const header = parseHeaderLine(line, "gpu");
    if (header) {
      index = columnIndex(header);
      continue;
    }
    const gpu = index ? parseGpuRow(line, index) : null;
    if (gpu) gpus.push(gpu);
    else strayLines.push(line.trim());
  }
  return { gpus, strayLines };
}

// ---------------------------------------------------------------------------------------
// Compute-app rows

/**
 * One --query-compute-apps row. The process name may itself contain `, ` (nothing is
 * quoted), so cells left of it are taken from the start and cells right of it from the end;
 * whatever remains in the middle is the name.
 */
export function parseComputeAppRow(line: string, index: ColumnIndex): ComputeApp | null {
  const trimmed = line.trim();
  if (trimmed === "") return null;
  const raw = trimmed.split(",");
  const n = index.columns.length;
  if (raw.length < n) return null;
  const nameAt = index.at("process_name");
  let cells: string[];
  if (nameAt < 0 || raw.length === n) {
    if (raw.length !== n) return null;
    cells = raw.map((c) => c.trim());
  } else {
    const extra = raw.length - n;
    const before = raw.slice(0, nameAt);
    const name = raw.slice(nameAt, nameAt + extra + 1).join(",");
    const after = raw.slice(nameAt + extra + 1);
    cells = [...before, name, ...after].map((c) => c.trim());
  }
  const cell = (name: string): string | undefined => {
    const i = index.at(name);
    return i < 0 ? undefined : cells[i];
  };
  const gpuUuid = parseTextCell(cell("gpu_uuid"));
  const pid = parseNumberCell(cell("pid"));
  if (!/^(GPU|MIG)-[0-9A-Za-z-]+$/.test(gpuUuid) || pid === null || !Number.isInteger(pid) || pid <= 0) {
    return null;
  }
  return {
    gpuUuid,
    pid,
    processName: parseTextCell(cell("process_name")),
    usedMiB: parseNumberCell(cell("used_gpu_memory")),
  };
}

export interface ParsedComputeApps {
  apps: ComputeApp[];
  strayLines: string[];
}

/** A whole --query-compute-apps output (with no processes it is just the header, or nothing). */
export function parseComputeAppsCsv(text: string, assumedColumns?: readonly string[]): ParsedComputeApps {
  let index: ColumnIndex | null = assumedColumns ? columnIndex(assumedColumns.map((c) => canonicalColumn(c, "app"))) : null;
  const apps: ComputeApp[] = [];
  const strayLines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const header = parseHeaderLine(line, "app");
    if (header) {
      index = columnIndex(header);
      continue;
    }
    const app = index ? parseComputeAppRow(line, index) : null;
    if (app) apps.push(app);
    else strayLines.push(line.trim());
  }
  return { apps, strayLines };
}

// ---------------------------------------------------------------------------------------
// Failures

/** Exit codes from nvidia-smi's man page (plus 18, seen in the wild). */
const EXIT_CODE_MEANINGS: Record<number, string> = {
  2: "invalid argument or field",
  3: "operation not supported on the target device",
  4: "insufficient permissions",
  6: "query unsuccessful: object not found",
  8: "external power cables not attached",
  9: "NVIDIA driver is not loaded",
  10: "NVIDIA kernel detected an interrupt issue with a GPU",
  12: "NVML shared library could not be found or loaded",
  13: "NVML function not implemented by the installed driver",
  14: "infoROM is corrupted",
  15: "a GPU has fallen off the bus or has otherwise become inaccessible",
  18: "driver/library version mismatch",
  255: "other error or internal driver error",
};

/** Known error texts → the short explanation shown to the operator. */
const ERROR_TEXT_PATTERNS: { re: RegExp; explain: string }[] = [
  { re: /No devices were found/i, explain: "no NVIDIA GPU found" },
  {
    re: /couldn'?t communicate with the NVIDIA driver/i,
    explain: "cannot talk to the NVIDIA driver (not loaded or not running)",
  },
  { re: /Driver\/library version mismatch/i, explain: "driver/library version mismatch (driver updated without reboot?)" },
  { re: /fallen off the bus|fell off the bus/i, explain: "a GPU fell off the bus" },
  { re: /Unable to determine the device handle/i, explain: "a GPU is inaccessible (fell off the bus?)" },
  { re: /NVML Shared Library Not Found|libnvidia-ml/i, explain: "NVML library missing" },
  { re: /Insufficient Permissions/i, explain: "insufficient permissions" },
  { re: /is not a valid field to query/i, explain: "this driver does not know a queried field" },
];

/** Lines of output that look like an nvidia-smi error message (not CSV). */
export function errorLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && ERROR_TEXT_PATTERNS.some((p) => p.re.test(l)));
}

/** The field a "Field "x" is not a valid field to query." message names, if any. */
export function invalidQueryField(text: string): string | null {
  const m = /Field "([^"]+)" is not a valid field to query/i.exec(text);
  return m ? m[1] : null;
}

export interface NvidiaSmiFailure {
  exitCode?: number | null;
  signal?: string | null;
  /** stdout+stderr text (its non-CSV part is what matters) */
  output?: string;
  /** errno code of a failed spawn: ENOENT, EACCES … */
  spawnErrorCode?: string;
  path?: string;
}

/** One line an operator can act on, for a failed or exited nvidia-smi. */
export function describeNvidiaSmiFailure(f: NvidiaSmiFailure): string {
  const path = f.path ?? "nvidia-smi";
  if (f.spawnErrorCode === "ENOENT") return `nvidia-smi not found (${path}): binary missing`;
  if (f.spawnErrorCode === "EACCES") return `nvidia-smi not executable (${path}): permission denied`;
  if (f.spawnErrorCode) return `cannot run nvidia-smi (${path}): ${f.spawnErrorCode}`;
  const output = (f.output ?? "").trim();
  const matched = ERROR_TEXT_PATTERNS.find((p) => p.re.test(output));
  const firstMessage =
    output
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => ERROR_TEXT_PATTERNS.some((p) => p.re.test(l))) ??
    output
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .pop() ??
    "";
  const parts: string[] = [];
  if (matched) parts.push(matched.explain);
  else if (f.exitCode != null && EXIT_CODE_MEANINGS[f.exitCode]) parts.push(EXIT_CODE_MEANINGS[f.exitCode]);
  const how = f.signal != null ? `killed by ${f.signal}` : f.exitCode != null ? `exit code ${f.exitCode}` : "exited";
  const head = parts.length ? `nvidia-smi: ${parts[0]} (${how})` : `nvidia-smi ${how}`;
  return firstMessage ? `${head}: ${truncate(firstMessage, 300)}` : head;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
