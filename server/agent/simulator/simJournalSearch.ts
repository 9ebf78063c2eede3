/**
 * The simulated journal's search and unit file, behind the same SystemdAdapter methods as the
 * real ones (searchJournal, readUnitFile): the same filters and bounds over the in-memory lines,
 * and a unit file written from the unit's spec (with a token in it, so masking shows in the demo).
 */
import type { UnitFile } from "../../contract/journalSearch";
import { journalPriorityNumber } from "../../contract/journalSearch";
import type { JournalEntry } from "../../contract/types";
import { inRange, kernelGrep, mergeByTime, type JournalRead, type JournalSearchQuery, type SearchOptions } from "../systemd/journalSearch";
import { unitFileWord } from "../systemd/unitFile";
import type { SimUnitSpec } from "./units";

/** One simulated boot: 0 matches all lines, any earlier boot none. */
export function searchSimJournal(lines: readonly JournalEntry[], kernel: readonly JournalEntry[], q: JournalSearchQuery, opts: SearchOptions): JournalRead {
  const prio = q.priority === undefined ? 7 : (journalPriorityNumber(q.priority) ?? 7);
  const grep = q.grep ? new RegExp(q.grep, "i") : null;
  const otherBoot = q.boot !== undefined && q.boot !== 0;
  const pick = (source: readonly JournalEntry[], extra: (e: JournalEntry) => boolean, cursor?: string) => {
    let from = 0;
    if (cursor) {
      const at = source.findIndex((e) => e.cursor === cursor);
      from = at >= 0 ? at + 1 : 0;
    }
    return otherBoot ? [] : source.slice(from).filter((e) => e.priority <= prio && inRange(e, q) && (grep === null || grep.test(e.message)) && extra(e));
  };
  let entries = pick(lines, (e) => e.unit === q.unit, q.cursor);
  if (q.kernelPci) {
    const re = new RegExp(kernelGrep(q.kernelPci), "i");
    entries = mergeByTime(
      entries,
      pick(kernel, (e) => re.test(e.message)),
      Number.MAX_SAFE_INTEGER,
    );
  }
  const max = Math.min(q.limit ?? opts.bounds.maxLines, opts.bounds.maxLines);
  let cut = false;
  if (opts.keep === "oldest" && entries.length > max) {
    entries = entries.slice(0, max);
    cut = true;
  } else if (entries.length > max) {
    entries = entries.slice(entries.length - max);
    cut = true;
  }
  if (opts.onEntry) {
    for (const e of entries) opts.onEntry(e);
    return { entries: [], cut };
  }
  return { entries, cut };
}

/** The unit file a simulated unit would have, with a drop-in for engines that take a token. */
export function simUnitFile(spec: SimUnitSpec, stale: boolean): UnitFile {
  const exec = (argv: string[]) => argv.map(unitFileWord).join(" ");
  const fragment = [
    "[Unit]",
    `Description=${spec.description}`,
    "After=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    ...spec.execStartPre.map((a) => `ExecStartPre=${exec(a)}`),
    `ExecStart=${exec(spec.execStart)}`,
    ...spec.execStopPost.map((a) => `ExecStopPost=${exec(a)}`),
    "Environment=HF_HOME=/models/.cache HF_TOKEN=hf_simulatedDemoToken0123456789",
    "EnvironmentFile=-/etc/gpudeck/engine.env",
    `Restart=${spec.restart}`,
    `TimeoutStartSec=${Math.round(spec.timeoutStartMs / 1000)}`,
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
  const dropInPath = `${spec.fragmentPath}.d/10-gpudeck.conf`;
  const dropIn = ["[Service]", 'Environment="VLLM_LOGGING_LEVEL=INFO" "OPENAI_API_KEY=sk-simulated-demo-key"', ""].join("\n");
  return {
    fragmentPath: spec.fragmentPath,
    fragment,
    dropIns: [{ path: dropInPath, text: dropIn }],
    needDaemonReload: stale,
    effective: [
      `ExecStart=${exec(spec.execStart)}`,
      "Environment=HF_HOME=/models/.cache",
      "Environment=HF_TOKEN=hf_simulatedDemoToken0123456789",
      "Environment=VLLM_LOGGING_LEVEL=INFO",
      "Environment=OPENAI_API_KEY=sk-simulated-demo-key",
      "EnvironmentFile=-/etc/gpudeck/engine.env",
    ],
    problems: [],
  };
}
