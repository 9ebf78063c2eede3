/**
 * Demo mode has no login: everyone is the demo admin. It must only ever pair with simulated
 * agents, so before a demo panel serves anyone it waits for every configured agent's first
 * answer, and refuses to start when one of them is a real host. (At run time each link keeps
 * refusing a real agent, and calls go only to hosts known to be simulated: fleet/hostLink.ts.)
 */
import { demoRefusal, type HostLink } from "./fleet/hostLink";

export interface DemoHostsCheck {
  /** agents that answered as real hosts: the panel must not start */
  real: { name: string; url: string; message: string }[];
  /** agents that did not answer in time (their actions are refused until they say they are simulated) */
  silent: string[];
}

/** Wait (at most `timeoutMs`) until each link is connected to a simulated agent or was refused as a real one. */
export async function checkDemoHosts(links: () => HostLink[], timeoutMs = 20_000, pollMs = 50): Promise<DemoHostsCheck> {
  const deadline = Date.now() + timeoutMs;
  const settled = (l: HostLink) => l.refusedReal || (l.state === "connected" && l.simulated);
  while (Date.now() < deadline && !links().every(settled)) await new Promise((r) => setTimeout(r, pollMs));
  const all = links();
  return {
    real: all.filter((l) => l.refusedReal).map((l) => ({ name: l.name, url: l.config.url, message: demoRefusal(l.config.url) })),
    silent: all.filter((l) => !settled(l)).map((l) => l.name),
  };
}
