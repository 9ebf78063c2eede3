/**
 * A small, honest wrapper around a dbus-next connection: method calls with timeouts that fail
 * (instead of hanging forever) when the connection drops, a signal callback, and a close
 * callback. dbus-next itself never rejects pending calls on disconnect and does not surface
 * the end of its stream, so both are handled here.
 */
import { EventEmitter } from "node:events";
import dbus from "dbus-next";

export const SYSTEM_BUS_DEFAULT = "unix:path=/run/dbus/system_bus_socket";

export interface CallRequest {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

export interface SignalMessage {
  /** arrival order of this message among everything received on the connection */
  seq: number;
  sender: string;
  path: string;
  interface: string;
  member: string;
  body: unknown[];
}

/** An error reply from the peer (e.g. org.freedesktop.systemd1.NoSuchUnit), or a transport failure. */
export class BusError extends Error {
  constructor(
    message: string,
    /** D-Bus error name, or "gpudeck.Timeout" / "gpudeck.Disconnected" */
    readonly dbusName: string,
  ) {
    super(message);
    this.name = "BusError";
  }
}

/** The internals of dbus-next we rely on (it exposes no end-of-stream event). */
interface DbusNextInternals {
  _connection?: EventEmitter & { stream?: EventEmitter };
}

export class BusConnection {
  private closedReason: string | null = null;
  /** counts every incoming message, so replies and signals can be ordered against each other */
  private seq = 0;
  private readonly replySeq = new Map<number, number>();
  private readonly pending = new Set<(err: Error) => void>();
  private signalHandler: (m: SignalMessage) => void = () => {};
  private closeHandler: (reason: string) => void = () => {};

  private constructor(private readonly bus: dbus.MessageBus) {}

  /** Connect and say Hello; rejects on error or after `timeoutMs`. */
  static open(address: string, timeoutMs = 5000): Promise<BusConnection> {
    return new Promise((resolve, reject) => {
      let bus: dbus.MessageBus;
      try {
        // sessionBus() is dbus-next's generic "connect to this address" (systemBus() only reads the env)
        bus = dbus.sessionBus({ busAddress: address });
      } catch (err) {
        reject(new BusError(`cannot connect to ${address}: ${(err as Error).message}`, "gpudeck.Disconnected"));
        return;
      }
      const conn = new BusConnection(bus);
      let settled = false;
      const timer = setTimeout(() => fail(new Error(`no answer from ${address} within ${timeoutMs} ms`)), timeoutMs);
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // usocket appends its source location ("ECONNREFUSED, USocket socket '../src/uwrap.cc:525'")
        const why = err.message.replace(/,\s*USocket .*$/, "");
        conn.shutdown(why);
        reject(new BusError(`cannot connect to ${address}: ${why}`, "gpudeck.Disconnected"));
      };
      bus.on("error", (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        if (!settled) fail(e);
        else conn.shutdown(`bus connection error: ${e.message}`);
      });
      const internals = (bus as unknown as DbusNextInternals)._connection;
      const onEnd = () => {
        if (!settled) fail(new Error("connection closed"));
        else conn.shutdown("the bus closed the connection");
      };
      internals?.on("end", onEnd);
      internals?.stream?.on("close", onEnd);
      // Runs before dbus-next resolves the matching call, in wire order.
      bus.on("message", (msg: dbus.Message) => {
        const seq = ++conn.seq;
        if (msg.type === dbus.MessageType.METHOD_RETURN || msg.type === dbus.MessageType.ERROR) {
          conn.replySeq.set(Number(msg.replySerial), seq);
          // replies to calls that already timed out are never collected
          if (conn.replySeq.size > 1024) conn.replySeq.delete(conn.replySeq.keys().next().value!);
          return;
        }
        if (msg.type !== dbus.MessageType.SIGNAL) return;
        try {
          conn.signalHandler({
            seq,
            sender: msg.sender,
            path: msg.path,
            interface: msg.interface,
            member: msg.member,
            body: msg.body as unknown[],
          });
        } catch {
          // a handler bug must not kill the connection; handlers log their own errors
        }
      });
      bus.once("connect", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(conn);
      });
    });
  }

  get closed(): boolean {
    return this.closedReason !== null;
  }

  onSignal(handler: (m: SignalMessage) => void): void {
    this.signalHandler = handler;
  }

  /** Called once, when the connection ends for any reason other than close(). */
  onClose(handler: (reason: string) => void): void {
    this.closeHandler = handler;
  }

  async call(req: CallRequest, timeoutMs = 10_000): Promise<unknown[]> {
    return (await this.callWithSeq(req, timeoutMs)).body;
  }

  /**
   * Like call(), plus `seq`: the arrival position of the reply. A signal with a lower seq was
   * sent by the peer before it answered, so the reply already reflects it.
   */
  async callWithSeq(req: CallRequest, timeoutMs = 10_000): Promise<{ body: unknown[]; seq: number }> {
    if (this.closedReason !== null) throw new BusError(`bus connection closed: ${this.closedReason}`, "gpudeck.Disconnected");
    const msg = new dbus.Message({
      destination: req.destination,
      path: req.path,
      interface: req.interface,
      member: req.member,
      signature: req.signature ?? "",
      body: req.body ?? [],
    });
    let timer: NodeJS.Timeout | undefined;
    let abort: ((err: Error) => void) | undefined;
    const failure = new Promise<never>((_, reject) => {
      abort = reject;
      timer = setTimeout(() => reject(new BusError(`${req.interface}.${req.member} got no reply within ${timeoutMs} ms`, "gpudeck.Timeout")), timeoutMs);
    });
    this.pending.add(abort!);
    try {
      const reply = await Promise.race([this.bus.call(msg), failure]);
      const seq = this.replySeq.get(Number(msg.serial)) ?? this.seq;
      return { body: (reply?.body as unknown[] | undefined) ?? [], seq };
    } catch (err) {
      if (err instanceof BusError) throw err;
      const e = err as { type?: string; text?: string; message?: string };
      if (typeof e.type === "string") throw new BusError(e.text ?? e.message ?? e.type, e.type);
      throw new BusError((err as Error).message ?? String(err), "gpudeck.Disconnected");
    } finally {
      clearTimeout(timer);
      this.pending.delete(abort!);
      if (msg.serial !== null) this.replySeq.delete(Number(msg.serial));
    }
  }

  /** AddMatch on the bus daemon. */
  addMatch(rule: string): Promise<unknown[]> {
    return this.call({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "AddMatch",
      signature: "s",
      body: [rule],
    });
  }

  removeMatch(rule: string): Promise<unknown[]> {
    return this.call({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "RemoveMatch",
      signature: "s",
      body: [rule],
    });
  }

  /** Close on purpose: no close callback. */
  close(): void {
    this.closeHandler = () => {};
    this.shutdown("closed by the agent");
  }

  private shutdown(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    const err = new BusError(`bus connection closed: ${reason}`, "gpudeck.Disconnected");
    for (const reject of this.pending) reject(err);
    this.pending.clear();
    try {
      this.bus.disconnect();
    } catch {
      // already gone
    }
    this.closeHandler(reason);
  }
}
