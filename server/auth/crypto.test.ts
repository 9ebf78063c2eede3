import { describe, expect, it } from "vitest";
import { bearerToken, randomToken, sha256Hex, tokensEqual, TOKEN_RE } from "./crypto";

describe("tokensEqual", () => {
  it("matches equal tokens and rejects different ones of any length", () => {
    const t = randomToken();
    expect(tokensEqual(t, `${t}`)).toBe(true);
    expect(tokensEqual(t, t.slice(0, -1))).toBe(false);
    expect(tokensEqual(t, `${t}x`)).toBe(false);
    expect(tokensEqual("a", "b")).toBe(false);
    expect(tokensEqual("short", "a much much longer token value")).toBe(false);
  });

  it("never matches an empty or missing token, even against itself", () => {
    expect(tokensEqual("", "")).toBe(false);
    expect(tokensEqual(undefined, undefined)).toBe(false);
    expect(tokensEqual(null, "x")).toBe(false);
    expect(tokensEqual("x", undefined)).toBe(false);
  });

  it("compares unicode by bytes", () => {
    expect(tokensEqual("pässword", "pässword")).toBe(true);
    expect(tokensEqual("pässword", "passwörd")).toBe(false);
  });
});

describe("randomToken / sha256Hex", () => {
  it("makes 256-bit url-safe tokens that do not repeat", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const t = randomToken();
      expect(t).toMatch(TOKEN_RE);
      seen.add(t);
    }
    expect(seen.size).toBe(200);
  });

  it("hashes to 64 hex characters", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("bearerToken", () => {
  it("extracts the token from an Authorization header", () => {
    expect(bearerToken("Bearer abc.DEF-123")).toBe("abc.DEF-123");
    expect(bearerToken("bearer   xyz")).toBe("xyz");
  });
  it("rejects other schemes and malformed values", () => {
    expect(bearerToken(null)).toBeNull();
    expect(bearerToken("")).toBeNull();
    expect(bearerToken("Basic dXNlcjpwYXNz")).toBeNull();
    expect(bearerToken("Bearer ")).toBeNull();
    expect(bearerToken("Bearer a b")).toBeNull();
    expect(bearerToken("Bearer a\r\nX-Evil: 1")).toBeNull();
  });
});
