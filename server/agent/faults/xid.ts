/**
 * Parsing NVIDIA Xid kernel messages, as `journalctl -k` shows them:
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
 *   NVRM: Xid (PCI:0000:02:00): 13, Graphics Exception: ESR 0x404600=0x80000001   (older drivers: no pid/name)
 * optionally behind a dmesg time stamp ("[ 1234.5678] "). Pure.
 */

export interface XidMessage {
  /** PCI address as printed, lower-cased ("0000:3b:00") */
  pci: string;
  code: number;
  pid: number | null;
  processName: string | null;
  /** what follows the code, pid and name */
  text: string;
}

const XID_RE = /NVRM: Xid \(PCI:([0-9a-fA-F]{1,8}(?::[0-9a-fA-F]{1,4}){1,2}(?:\.[0-7])?)\): (\d{1,5}),\s*(.*)$/;
const PID_RE = /^pid=(?:(\d{1,10})|'?<unknown>'?),\s*/;
const NAME_RE = /^name=([^,]{0,64}),\s*/;

/** A kernel message → its Xid, or null when it is not one. */
export function parseXidMessage(message: string): XidMessage | null {
  const m = XID_RE.exec(message.trim());
  if (!m) return null;
  let rest = m[3]!;
  let pid: number | null = null;
  let processName: string | null = null;
  const p = PID_RE.exec(rest);
  if (p) {
    pid = p[1] ? Number(p[1]) : null;
    rest = rest.slice(p[0].length);
    const n = NAME_RE.exec(rest);
    if (n) {
      const name = n[1]!.trim();
      processName = name === "" || /^'?<unknown>'?$/.test(name) ? null : name;
      rest = rest.slice(n[0].length);
    }
  }
  return { pci: m[1]!.toLowerCase(), code: Number(m[2]), pid: pid !== null && pid > 0 ? pid : null, processName, text: rest.trim().slice(0, 2000) };
}

/**
 * A PCI address in a form both sides agree on: the driver prints `0000:3b:00`, nvidia-smi
 * `00000000:3B:00.0`. → "0:3b:00" (domain as a number, bus and device, no function).
 */
export function pciKey(address: string): string | null {
  const m = /^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\.[0-7])?$/.exec(address.trim());
  if (!m) return null;
  const domain = m[1] ? parseInt(m[1], 16) : 0;
  return `${domain}:${m[2]!.toLowerCase().padStart(2, "0")}:${m[3]!.toLowerCase().padStart(2, "0")}`;
}
