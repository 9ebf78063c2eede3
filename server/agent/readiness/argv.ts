/**
 * Reading a unit's command line the way a person reads it: the words of a `sh -c '…'` script,
 * and what `docker run …` / `podman run …` starts (options, image, command, published ports).
 * Only for recognising an engine and where it listens; nothing here is ever executed. Pure.
 */

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash"]);
const CONTAINER_CLIS = new Set(["docker", "podman", "nerdctl"]);

export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/**
 * Words of a shell script as the shell would split them (quotes, backslashes), without
 * expansions; operators (`&&`, `;`, `|`) come out as their own words.
 */
export function shellWords(script: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  const flush = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  for (let i = 0; i < script.length; i++) {
    const ch = script[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
      else word += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === "\\" && i + 1 < script.length && '"\\$`'.includes(script[i + 1]!)) word += script[++i];
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < script.length) {
      word += script[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      flush();
    } else if (ch === ";" || ch === "|" || ch === "&") {
      flush();
      let op = ch;
      while (i + 1 < script.length && (script[i + 1] === "&" || script[i + 1] === "|")) op += script[++i];
      words.push(op);
    } else {
      word += ch;
      inWord = true;
    }
  }
  flush();
  return words;
}

/** argv with every `sh -c 'script'` replaced by the script's words (so the engine inside is found). */
export function expandShellScripts(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    out.push(word);
    if (SHELLS.has(basename(word))) {
      const c = argv.indexOf("-c", i + 1);
      if (c > i && c + 1 < argv.length && argv.slice(i + 1, c).every((a) => a.startsWith("-"))) {
        out.push(...argv.slice(i + 1, c + 1), ...shellWords(argv[c + 1]!));
        i = c + 1;
      }
    }
  }
  return out;
}

// `docker run` options that take a value (as the next word unless written --opt=value).
const VALUE_OPTIONS = new Set(
  (
    "-a --attach --add-host --annotation --blkio-weight --cap-add --cap-drop --cgroup-parent --cgroupns --cidfile -c --cpu-shares " +
    "--cpu-period --cpu-quota --cpus --cpuset-cpus --cpuset-mems --device --device-cgroup-rule --dns --dns-option --dns-search " +
    "--domainname --entrypoint -e --env --env-file --expose --gpus --group-add --health-cmd --health-interval --health-retries " +
    "--health-start-period --health-timeout -h --hostname --ip --ip6 --ipc --isolation --label -l --label-file --link --log-driver " +
    "--log-opt --mac-address -m --memory --memory-reservation --memory-swap --mount --name --network --net --network-alias --pid " +
    "--platform -p --publish --pull --restart --runtime --security-opt --shm-size --stop-signal --stop-timeout --storage-opt " +
    "--sysctl --tmpfs --ulimit -u --user --userns --uts -v --volume --volumes-from -w --workdir --device-read-bps --oom-score-adj"
  ).split(" "),
);

export interface PortMapping {
  /** the address on the host ("" = all) */
  hostIp: string;
  /** null: a random host port (`-p 8000`) */
  hostPort: number | null;
  containerPort: number;
}

export interface ContainerRun {
  cli: string;
  image: string;
  /** the words after the image: the command, or the entrypoint's arguments */
  command: string[];
  ports: PortMapping[];
  /** --network host (the container's ports are the host's) */
  hostNetwork: boolean;
  /** -e KEY=VALUE / --env KEY=VALUE */
  env: Record<string, string>;
  /** -P: every exposed port on a random host port */
  publishAll: boolean;
}

/** `docker run …` (also `docker container run`, podman, nerdctl) at argv[start], or null. */
export function parseContainerRun(argv: readonly string[], start: number): ContainerRun | null {
  if (!CONTAINER_CLIS.has(basename(argv[start] ?? ""))) return null;
  let i = start + 1;
  if (argv[i] === "container") i++;
  if (argv[i] !== "run") return null;
  i++;
  const run: ContainerRun = { cli: basename(argv[start]!), image: "", command: [], ports: [], hostNetwork: false, env: {}, publishAll: false };
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const eq = word.indexOf("=");
    const name = word.startsWith("--") && eq > 0 ? word.slice(0, eq) : word;
    let value: string | null = null;
    if (word.startsWith("--") && eq > 0) value = word.slice(eq + 1);
    else if (VALUE_OPTIONS.has(word)) value = argv[++i] ?? "";
    else if (/^-[pev]./.test(word)) value = word.slice(2); // -p8000:8000
    const short = /^-[pev]./.test(word) ? word.slice(0, 2) : name;
    if (short === "-P" || name === "--publish-all") run.publishAll = true;
    if (value === null) continue;
    if (short === "-p" || name === "--publish") {
      const mapping = parsePublish(value);
      if (mapping) run.ports.push(mapping);
    } else if (name === "--network" || name === "--net") {
      run.hostNetwork = value === "host";
    } else if (short === "-e" || name === "--env") {
      const at = value.indexOf("=");
      if (at > 0) run.env[value.slice(0, at)] = value.slice(at + 1);
    }
  }
  if (i >= argv.length) return null;
  run.image = argv[i]!;
  run.command = argv.slice(i + 1);
  return run;
}

/** `[ip:][hostPort:]containerPort[/proto]`, IPv6 ips in brackets. */
export function parsePublish(spec: string): PortMapping | null {
  const noProto = spec.replace(/\/(tcp|udp|sctp)$/, "");
  const m = /^(?:(\[[^\]]*\]|[^:]*):)??(?:(\d*):)?(\d+)$/.exec(noProto);
  if (!m) return null;
  const containerPort = Number(m[3]);
  const hostPort = m[2] ? Number(m[2]) : null;
  const hostIp = (m[1] ?? "").replace(/^\[|\]$/g, "");
  if (!validPort(containerPort) || (hostPort !== null && !validPort(hostPort))) return null;
  return { hostIp, hostPort, containerPort };
}

export const validPort = (n: number): boolean => Number.isInteger(n) && n > 0 && n <= 65535;

/** The value of `--name VALUE` / `--name=VALUE` among `args` (the first of `names` found). */
export function optionValue(args: readonly string[], names: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    for (const n of names) {
      if (a === n && i + 1 < args.length) return args[i + 1]!;
      if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
    }
  }
  return null;
}

export const hasFlag = (args: readonly string[], names: readonly string[]): boolean =>
  args.some((a) => names.includes(a) || names.some((n) => a.startsWith(`${n}=`)));
