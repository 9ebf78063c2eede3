/**
 * Ollama (`ollama serve`): it listens at once and loads models on the first request, so its
 * serving is decided by `/api/version`; at start it reports the compute it found, and
 * `library=cpu` (or "no compatible GPUs were discovered") means it found no GPU, e.g. because
 * the driver was not ready at boot (ollama #7669, #10204): a warning shown while it serves
 * (slowly, on the CPU), not a failure. Records are logfmt:
 * `time=… level=INFO source=types.go:130 msg="inference compute" id=GPU-… library=cuda …`.
 */
import { num, type LinePattern } from "./types";

const NO_GPU = "Ollama found no GPU and runs models on the CPU";

export const OLLAMA_PATTERNS: LinePattern[] = [
  {
    id: "ollama-listening",
    // `msg="Listening on 127.0.0.1:11434 (version 0.9.2)"`
    re: /Listening on \S+ \(version [^)]+\)/,
    meaning: () => ({ ready: true }),
  },
  {
    id: "ollama-cpu",
    // `msg="inference compute" id=0 library=cpu variant="" compute="" driver=0.0 name="" total="62.5 GiB" available="58.0 GiB"`
    re: /msg="inference compute".*\blibrary=cpu\b/,
    meaning: () => ({ warning: `${NO_GPU} (inference compute library=cpu)` }),
  },
  {
    id: "ollama-no-gpu",
    // `msg="no compatible GPUs were discovered"`
    re: /no compatible GPUs were discovered/,
    meaning: () => ({ warning: `${NO_GPU} (no compatible GPUs were discovered)` }),
  },
  {
    id: "ollama-runner-started",
    // `msg="llama runner started in 3.01 seconds"`
    re: /llama runner started in ([\d.]+) seconds/,
    meaning: (m) => ({ timing: { stage: "loading a model", seconds: num(m[1]) } }),
  },
  {
    id: "ollama-runner-failed",
    // `msg="error loading llama server" error="llama runner process has terminated: error loading model: …"`
    re: /error loading llama server|llama runner process has terminated/,
    meaning: () => ({ failure: "a model runner failed to load (see the line)", generic: true }),
  },
];
