/**
 * Secrets in command lines, environment assignments, URLs and log lines, masked before anything
 * leaves the agent: `vllm serve … --api-key ••••`, `HF_TOKEN=••••`, `https://user:••••@host`,
 * `Authorization: Bearer ••••`. Pattern-based: it catches the usual spellings (flags and
 * variables whose name has a segment such as token, secret, password, api-key, key), not every
 * secret a program could take; admins can reveal a unit's command lines with an audited action.
 * Part of the contract: imports nothing else of the project.
 */

export const REDACTED = "••••";

/** Name segments (split at - _ .) that make a flag or variable a secret: `--hf-token`, `OPENAI_API_KEY`. */
const SECRET_SEGMENTS = new Set([
  "token",
  "secret",
  "secrets",
  "password",
  "passwd",
  "pwd",
  "apikey",
  "credential",
  "credentials",
  "creds",
  "key",
  "passphrase",
  "auth",
  "authorization",
]);
/** …unless a segment says the value only points at one or describes it: `--api-key-file`, `--max-key-len`. */
const NOT_THE_SECRET = new Set([
  "file",
  "path",
  "dir",
  "id",
  "name",
  "env",
  "len",
  "length",
  "size",
  "mode",
  "type",
  "header",
  "var",
  "method",
  "url",
  "host",
  "port",
]);
/** …or a first segment says it is a switch, not a value: `--no-auth`, `--disable-auth`. */
const SWITCH_PREFIXES = new Set(["no", "enable", "disable", "require", "skip", "allow"]);

/** Is a flag (`--api-key`, `-token`) or variable name (`HF_TOKEN`, `password`) one whose value is a secret? */
export function isSecretName(name: string): boolean {
  const segments = name
    .replace(/^-+/, "")
    .toLowerCase()
    .split(/[-_.]+/)
    .filter(Boolean);
  if (segments.length > 1 && SWITCH_PREFIXES.has(segments[0]!)) return false;
  return segments.some((s) => SECRET_SEGMENTS.has(s)) && !segments.some((s) => NOT_THE_SECRET.has(s));
}

const FLAG = "--?[A-Za-z0-9][A-Za-z0-9_.-]*";
/** A value as a shell line writes it: 'quoted', "quoted" (spaces and all) or one bare word. */
const VALUE = `'[^']*'|"[^"]*"|[^\\s'"]+`;
const FLAG_EQ = new RegExp(`(^|[\\s'"=])(${FLAG})=(${VALUE})`, "g");
const FLAG_SPACE = new RegExp(`(^|[\\s'"])(${FLAG})(\\s+)(${VALUE})`, "g");
const ENV = /(^|[\s'";(])([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|"[^"]*"|[^\s'";)]+)/g;
/** scheme://user:password@ (the password may itself hold an '@'; the user may be empty: redis://:pw@) or scheme://token@ */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:'"]*)(?::([^\s/?#'"]*))?@/gi;
const AUTH_HEADER = /\b((?:proxy-)?authorization\s*[:=]\s*(?:bearer|basic|token|digest)?\s*)([^\s'"]+)/gi;
const BEARER = /\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})/gi;

/** A value's mask, keeping the quotes around it. */
function masked(value: string): string {
  const q = value[0];
  return (q === "'" || q === '"') && value.length > 1 && value.endsWith(q) ? `${q}${REDACTED}${q}` : REDACTED;
}

/** Every pattern above needs one of these: `=`, `:` (URLs, headers) or white space. */
const MAY_HOLD_SECRET = /[=:\s]/;
/** Answers for strings seen before: the agent redacts the same GPU sample's strings every second. */
const memo = new Map<string, string>();
const MEMO_MAX_ENTRIES = 4096;
const MEMO_MAX_CHARS = 1024;

/** Secrets inside one string: a shell script, a log line, one argv element, a unit file. */
export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  if (text.length > MEMO_MAX_CHARS) return redactAt(text, 0);
  const known = memo.get(text);
  if (known !== undefined) return known;
  const out = redactAt(text, 0);
  if (memo.size >= MEMO_MAX_ENTRIES) memo.delete(memo.keys().next().value!);
  memo.set(text, out);
  return out;
}

/** How many answers redactText keeps (tests). */
export function redactMemoSize(): number {
  return memo.size;
}

function redactAt(text: string, depth: number): string {
  if (text.length === 0) return text;
  return text
    .replace(URL_USERINFO, (_m, scheme: string, user: string, pass: string | undefined) =>
      pass === undefined ? `${scheme}${REDACTED}@` : `${scheme}${user}:${REDACTED}@`,
    )
    .replace(AUTH_HEADER, (_m, head: string) => `${head}${REDACTED}`)
    .replace(BEARER, (_m, head: string) => `${head}${REDACTED}`)
    .replace(FLAG_EQ, (m, pre: string, flag: string, value: string) => (isSecretName(flag) ? `${pre}${flag}=${masked(value)}` : m))
    .replace(FLAG_SPACE, (m, pre: string, flag: string, gap: string, value: string) =>
      isSecretName(flag) && !value.startsWith("--") && value !== REDACTED ? `${pre}${flag}${gap}${masked(value)}` : m,
    )
    .replace(ENV, (m, pre: string, name: string, value: string) =>
      isSecretName(name) ? `${pre}${name}=${masked(value)}` : `${pre}${name}=${assignments(value, depth)}`,
    );
}

/**
 * The value of a harmless name may itself hold assignments, as unit files write them:
 * `Environment=HF_TOKEN=hf_…`, `Environment="A=1" "HF_TOKEN=…"`, `Environment="HF_TOKEN=…"`.
 * Its inside is redacted again (a few levels deep: `a=b=c=…` stays linear).
 */
function assignments(value: string, depth: number): string {
  if (depth >= 3 || !value.includes("=")) return value;
  const q = value[0];
  if ((q === '"' || q === "'") && value.length > 1 && value.endsWith(q)) {
    const inner = value.slice(1, -1);
    // one quoted assignment: its whole value is the secret, spaces and all
    const one = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(inner);
    if (one && isSecretName(one[1]!)) return `${q}${one[1]}=${REDACTED}${q}`;
    return `${q}${redactAt(inner, depth + 1)}${q}`;
  }
  return redactAt(value, depth + 1);
}

/** An argv: `--api-key` then its value as the next element, and every element's own text. */
export function redactArgv(argv: readonly string[]): string[] {
  const out = argv.map(redactText);
  for (let i = 0; i < argv.length - 1; i++) {
    const a = argv[i]!;
    if (/^--?[A-Za-z0-9]/.test(a) && !a.includes("=") && isSecretName(a) && !argv[i + 1]!.startsWith("--")) out[i + 1] = REDACTED;
  }
  return out;
}

/**
 * A copy of any JSON-like value with every string redacted: arrays of strings as argv (flag and
 * value are separate elements), other strings as text. Object keys are kept.
 */
export function redactDeep<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => typeof v === "string")) return redactArgv(value as string[]);
    return value.map(walk);
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v);
    return out;
  }
  return value;
}

/**
 * What a procedure returns, redacted: a value, or a subscription's stream item by item (tRPC's
 * `tracked(id, data)` envelopes keep their id and marker).
 */
export function redactOutput(data: unknown): unknown {
  if (data !== null && typeof data === "object" && Symbol.asyncIterator in data) return redactStream(data as AsyncIterable<unknown>);
  return redactDeep(data);
}

async function* redactStream(source: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const item of source) {
    if (Array.isArray(item) && item.length === 3 && typeof item[2] === "symbol") yield [item[0], redactDeep(item[1]), item[2]];
    else yield redactDeep(item);
  }
}
