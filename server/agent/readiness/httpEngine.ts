/**
 * The real EngineHttp: a GET with fetch to an engine on this host. A URL that does not point at
 * loopback or one of this host's own addresses is refused before anything is sent; redirects are
 * not followed (a redirect could lead anywhere); every call has a timeout and a body limit.
 */
import type { EngineHttp, EngineHttpRequest, EngineHttpResponse } from "../adapter";
import { isHostLocal } from "./localAddress";

export function createHttpEngineProbe(): EngineHttp {
  return { get: httpGet };
}

export async function httpGet(req: EngineHttpRequest): Promise<EngineHttpResponse> {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { kind: "error", message: `not a URL: ${req.url}` };
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !isHostLocal(url.hostname)) {
    return { kind: "error", message: `not probed: ${url.host} is not a loopback or host-local address` };
  }
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
  try {
    const res = await fetch(url, { signal, redirect: "manual", headers: { accept: "application/json, text/plain;q=0.9, */*;q=0.5" } });
    return { kind: "response", status: res.status, body: await readLimited(res, req.maxBytes ?? 256 * 1024) };
  } catch (err) {
    if (timeout.aborted) return { kind: "timeout", message: `no answer within ${req.timeoutMs} ms` };
    if (req.signal?.aborted) return { kind: "error", message: "probe cancelled" };
    const code = (err as { cause?: { code?: string } }).cause?.code;
    if (code === "ECONNREFUSED") return { kind: "refused", message: "connection refused" };
    return { kind: "error", message: code ? `${code}: ${(err as Error).message}` : (err as Error).message };
  }
}

async function readLimited(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size >= maxBytes) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString("utf8");
}
