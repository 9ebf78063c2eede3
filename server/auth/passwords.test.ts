import { hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import { hashPassword, needsRehash, passwordProblem, PASSWORD_MAX_LENGTH, verifyDummy, verifyPassword } from "./passwords";

describe("password hashing", () => {
  it("hashes with argon2id and today's parameters, salted", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(a).not.toBe(b);
    expect(needsRehash(a)).toBe(false);
  });

  it("verifies the right password and rejects a wrong one", async () => {
    const h = await hashPassword("correct horse battery staple");
    expect(await verifyPassword(h, "correct horse battery staple")).toBe(true);
    expect(await verifyPassword(h, "correct horse battery stapl")).toBe(false);
    expect(await verifyPassword(h, "")).toBe(false);
  });

  it("treats composed and decomposed unicode as the same password", async () => {
    const composed = "Pässwört-sëcret-1".normalize("NFC");
    const decomposed = composed.normalize("NFD");
    expect(composed).not.toBe(decomposed);
    const h = await hashPassword(decomposed);
    expect(await verifyPassword(h, composed)).toBe(true);
  });

  it("returns false instead of throwing on a corrupt stored hash or absurd input", async () => {
    expect(await verifyPassword("not a hash", "whatever whatever")).toBe(false);
    expect(await verifyPassword("$argon2id$v=19$m=19456,t=2,p=1$broken", "whatever whatever")).toBe(false);
    const h = await hashPassword("correct horse battery staple");
    expect(await verifyPassword(h, "x".repeat(PASSWORD_MAX_LENGTH * 3))).toBe(false);
  });

  it("flags hashes made with other parameters for rehashing", async () => {
    const weak = await hash("correct horse battery staple", { memoryCost: 4096, timeCost: 1 });
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash("$2b$10$bcrypt-ish")).toBe(true);
  });

  it("dummy verification always fails and costs about as much as a real one", async () => {
    expect(await verifyDummy("anything at all")).toBe(false);
    const h = await hashPassword("correct horse battery staple");
    const median = async (fn: () => Promise<unknown>): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await fn();
        samples.push(performance.now() - t);
      }
      return samples.sort((a, b) => a - b)[1]!;
    };
    const dummyMs = await median(() => verifyDummy("anything at all"));
    const realMs = await median(() => verifyPassword(h, "wrong wrong wrong"));
    expect(dummyMs).toBeGreaterThan(realMs * 0.3);
  });
});

describe("passwordProblem", () => {
  it("accepts a decent password", () => {
    expect(passwordProblem("correct horse battery staple", "alice")).toBeNull();
    expect(passwordProblem("twelve chars", "alice")).toBeNull();
  });
  it.each([
    ["", /at least 12/],
    ["eleven char", /at least 12/],
    ["x".repeat(PASSWORD_MAX_LENGTH + 1), /at most/],
    ["aaaaaaaaaaaaaaaa", /repeated/],
    ["LongUserName1", /must not be the username/],
  ])("refuses %j", (pw, reason) => {
    expect(passwordProblem(pw, "longusername1")).toMatch(reason);
  });
  it("counts characters, not UTF-16 units", () => {
    // 11 emoji = 22 UTF-16 units, still too short
    expect(passwordProblem("😀😁😂🤣😃😄😅😆😉😊😋", "alice")).toMatch(/at least 12/);
  });
});
