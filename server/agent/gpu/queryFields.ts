/**
 * Which `--query-gpu` fields the sampler's loop asks for, and what it asks for instead when a
 * driver rejects one (`Field "x" is not a valid field`): an older name where there is one, else
 * nothing, for the fields it can live without.
 */
import { GPU_QUERY_FIELDS, invalidQueryField } from "./csv";
import { GPU_FIELD_FALLBACKS, GPU_HEALTH_QUERY_FIELDS } from "./health";

/** What a new sampler asks for. */
export const DEFAULT_GPU_FIELDS: readonly string[] = [...GPU_QUERY_FIELDS, ...GPU_HEALTH_QUERY_FIELDS];

/** Fields we can live without if a driver rejects them. */
const OPTIONAL_GPU_FIELDS = new Set([
  "name",
  "pci.bus_id",
  "utilization.gpu",
  "temperature.gpu",
  "power.draw",
  "utilization.memory",
  "power.limit",
  "clocks.sm",
  "clocks.max.sm",
  "index",
  ...GPU_HEALTH_QUERY_FIELDS,
  ...Object.values(GPU_FIELD_FALLBACKS),
]);

export interface FieldFallback {
  /** the query to ask next */
  fields: string[];
  /** the field the driver rejected, as we spelled it */
  rejected: string;
  /** what replaces it; undefined: nothing does */
  older: string | undefined;
}

/** The query without the field nvidia-smi's `output` says it rejected; null when none was, or it is one we need. */
export function fallbackFields(fields: readonly string[], output: string): FieldFallback | null {
  const field = invalidQueryField(output);
  if (!field) return null;
  const canonical = fields.find((f) => f === field || field.toLowerCase() === f);
  if (!canonical || !OPTIONAL_GPU_FIELDS.has(canonical)) return null;
  const older: string | undefined = GPU_FIELD_FALLBACKS[canonical];
  return {
    fields: older ? fields.map((f) => (f === canonical ? older : f)) : fields.filter((f) => f !== canonical),
    rejected: canonical,
    older,
  };
}
