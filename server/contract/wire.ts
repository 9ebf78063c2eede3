/**
 * The wire format's one extension: a value the server has already turned into JSON. A live event
 * that goes to a thousand browsers is serialized once (`preserialized`) and each stream sends the
 * same text; the transformer below (on the server's initTRPC and on every client) marks such text
 * and parses it back, so the client sees the original value. Every other value is sent as is, so a
 * client without this transformer reads all normal responses unchanged. Part of the contract:
 * imports nothing else of the project.
 */

/** Starts every pre-serialized payload; no normal top-level string output starts with NUL. */
const MARK = "\u0000json:";

class PreSerialized {
  constructor(readonly json: string) {}
}

/**
 * `value` as JSON text made once; typed as the value so procedures keep their inferred output
 * types (the transformer restores the value on the client).
 */
export function preserialized<T>(value: T): T {
  return new PreSerialized(JSON.stringify(value)) as unknown as T;
}

/** The JSON text of a `preserialized` value; null for any other value. */
export function preserializedJson(value: unknown): string | null {
  return value instanceof PreSerialized ? value.json : null;
}

/** Reuse one serialization across many sends (`preserialized` is cheap to pass around). */
export function isPreserialized(value: unknown): boolean {
  return value instanceof PreSerialized;
}

export const wireTransformer = {
  serialize: (value: unknown): unknown => (value instanceof PreSerialized ? MARK + value.json : value),
  deserialize: (value: unknown): unknown => (typeof value === "string" && value.startsWith(MARK) ? JSON.parse(value.slice(MARK.length)) : value),
};
