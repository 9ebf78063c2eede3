/** Where a host's pages are. Unit names can hold '@' and '\x2d' escapes: always encoded. */

export function hostHref(host: string): string {
  return `/hosts/${encodeURIComponent(host)}`;
}

export function hostUnitHref(host: string, unit: string): string {
  return `${hostHref(host)}/units/${encodeURIComponent(unit)}`;
}

export function hostGpusHref(host: string): string {
  return `${hostHref(host)}/gpus`;
}

/** The audit log of one unit (the timeline's action markers link there). */
export function auditUnitHref(unit: string): string {
  return `/audit?unit=${encodeURIComponent(unit)}`;
}
