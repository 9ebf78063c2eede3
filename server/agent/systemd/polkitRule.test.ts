/**
 * The shipped polkit rule (deploy/polkit/50-gpudeck.rules) run as polkit runs it (a JavaScript
 * file calling polkit.addRule), against the agent's own allow-list matching: for the same globs,
 * polkit must grant exactly the units the agent would act on, template instances ('@') included.
 * e2e/install runs the same file in polkitd under real systemd.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { matchesUnitGlobs } from "../../contract/unitNames";

const RULE = readFileSync(path.join(__dirname, "../../../deploy/polkit/50-gpudeck.rules"), "utf8");
const YES = "yes";
const NOT_HANDLED = "not-handled";

type Rule = (action: { id: string; lookup(key: string): string | undefined }, subject: { user: string }) => string;

/** The rule file evaluated with a stand-in `polkit`, optionally with other globs in UNITS. */
function loadRule(units?: string[]): { rule: Rule; globs: string[] } {
  let source = RULE;
  if (units) source = source.replace(/^var UNITS = \[.*\];$/m, `var UNITS = ${JSON.stringify(units)};`);
  const rules: Rule[] = [];
  const sandbox = { polkit: { Result: { YES, NOT_HANDLED }, addRule: (r: Rule) => rules.push(r) } };
  vm.runInNewContext(source, sandbox);
  const globs = (vm.runInNewContext(`${source}\nUNITS`, { polkit: { Result: sandbox.polkit.Result, addRule: () => undefined } }) as string[]).slice();
  expect(rules).toHaveLength(1);
  return { rule: rules[0]!, globs };
}

function grants(rule: Rule, unit: string, verb = "start", user = "gpudeck"): boolean {
  const action = { id: "org.freedesktop.systemd1.manage-units", lookup: (k: string) => (k === "unit" ? unit : k === "verb" ? verb : undefined) };
  return rule(action, { user }) === YES;
}

const NAMES = [
  "vllm-kimi.service",
  "vllm-.service",
  "vllm-a@x.service",
  "vllm-a@--help.service",
  "vllm-@x.service",
  "vllm@x.service",
  "vllm-a@.service",
  "ollama.service",
  "ollama@x.service",
  "sglang-b@7.service",
  "tgi-x.service",
  "tgi-x.socket",
  "other.service",
  "vllm-kimi.service.d",
  "team-vllm-a.service",
  "vllm-x@y@z.service",
];

describe("the polkit rule matches units as the agent's allow-list does", () => {
  it("the shipped globs: an '@' instance is not covered by vllm-*.service", () => {
    const { rule, globs } = loadRule();
    expect(grants(rule, "vllm-kimi.service")).toBe(true);
    expect(grants(rule, "vllm-a@--help.service")).toBe(false);
    expect(grants(rule, "sglang-b@7.service")).toBe(false);
    for (const name of NAMES) expect(grants(rule, name), name).toBe(matchesUnitGlobs(name, globs));
  });

  it("globs that name templates, '?' and literals: the same answers as the agent", () => {
    const globs = ["vllm-a@*.service", "vllm-?.service", "ollama.service", "sglang-*@7.service", "vllm@.service"];
    const { rule } = loadRule(globs);
    expect(grants(rule, "vllm-a@x.service")).toBe(true);
    expect(grants(rule, "vllm-@.service")).toBe(false);
    for (const name of [...NAMES, "vllm-b.service", "vllm-bb.service", "sglang-z@7.service", "sglang-z@8.service"]) {
      expect(grants(rule, name), name).toBe(matchesUnitGlobs(name, globs));
    }
  });

  it("other users, other actions and verbs are left to polkit's defaults", () => {
    const { rule } = loadRule();
    expect(grants(rule, "vllm-kimi.service", "start", "mallory")).toBe(false);
    expect(grants(rule, "vllm-kimi.service", "enable")).toBe(false);
    const other = rule({ id: "org.freedesktop.login1.reboot", lookup: () => undefined }, { user: "gpudeck" });
    expect(other).toBe(NOT_HANDLED);
  });
});
