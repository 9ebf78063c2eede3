/**
 * The diagnosis cases in priority order: the first that recognises the unit's situation
 * answers. Most cases answer for one ActiveState only, so the order matters among the cases of
 * the same state; the comments say why each comes where it does. Keep it exact: a reordering
 * changes what the panel says (registry.test.ts pins the precedences that matter).
 */
import type { Diagnosis } from "../contract/diagnosis";
import type { DiagnosisCase, FallbackCase } from "./case";
import type { DiagnosisContext } from "./context";
import { flappingCase, healthyCase } from "./cases/active";
import { restartCycleCase, startLimitCase } from "./cases/crashLoop";
import { dependencyFailedCase } from "./cases/dependencyFailed";
import { endlessLoopCase } from "./cases/endlessLoop";
import { failedCase } from "./cases/failed";
import { gpuFaultCase } from "./cases/gpuFault";
import { loadStateCase } from "./cases/loadState";
import { maintenanceCase, reloadingCase, startQueuedCase, stoppedCase, unknownStateCase } from "./cases/quietStates";
import { engineFailedCase, servingCase } from "./cases/serving";
import { startPhaseCase, startPreRunningCase } from "./cases/startPhases";
import { startRequestCase, wouldBeRefusedCase } from "./cases/startRequests";
import { stoppingCase } from "./cases/stopping";
import { timeoutCase } from "./cases/timeouts";
import { waitingForGpuCase } from "./cases/waitingForGpu";

export const DIAGNOSIS_CASES: readonly DiagnosisCase[] = [
  // Any state: a unit that cannot load cannot start, whatever its state says.
  loadStateCase,
  // Any state: a GPU fault that needs a reset (Xid 79 …) makes every other answer moot; another
  // Xid from the unit's own process explains a final failure.
  gpuFaultCase,
  // Any state: a restart loop the start limit can never end (GPUDECK_CRASH_LOOP), cycling or
  // running between crashes; before the cycle and flapping cases, which it sharpens.
  endlessLoopCase,
  // activating/auto-restart, and failed/inactive inside a Restart= cycle: not final yet.
  restartCycleCase,
  // inactive or failed: the last start request was skipped (ExecCondition=) or refused by systemd;
  // before the dependency case, which answers when that request's job ended "dependency".
  startRequestCase,
  // failed or inactive: a start cancelled by a failed dependency explains the state.
  dependencyFailedCase,
  // failed: the start limit, then a timeout, then any other failure (always answers).
  startLimitCase,
  timeoutCase,
  // failed: the engine logged why (CUDA out of memory …), before the generic failure.
  engineFailedCase,
  failedCase,
  // inactive: a start job queued, else a start would be refused (a required unit is missing), else plainly stopped (always answers).
  startQueuedCase,
  wouldBeRefusedCase,
  stoppedCase,
  // activating/start-pre|condition: waiting for GPU memory, else a plain ExecStartPre (always answers).
  waitingForGpuCase,
  startPreRunningCase,
  // activating/start|start-post.
  startPhaseCase,
  // deactivating (always answers).
  stoppingCase,
  // active: flapping, else not serving yet / any more (the engine's readiness), else healthy (always answers).
  flappingCase,
  servingCase,
  healthyCase,
  reloadingCase,
  maintenanceCase,
];

/** Asked when no case above answered: other activating sub-states and unknown ActiveStates. */
export const FALLBACK_CASE: FallbackCase = unknownStateCase;

/** The diagnosis, and the case that gave it. */
export function firstAnswer(ctx: DiagnosisContext): { from: DiagnosisCase; diagnosis: Diagnosis } {
  for (const c of DIAGNOSIS_CASES) {
    const diagnosis = c.diagnose(ctx);
    if (diagnosis !== null) return { from: c, diagnosis };
  }
  return { from: FALLBACK_CASE, diagnosis: FALLBACK_CASE.diagnose(ctx) };
}
