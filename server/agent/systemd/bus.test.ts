/**
 * BusConnection against a real, private dbus-daemon (no systemd, no root): replies, error
 * names, timeouts, the ordering of signals against replies, and what happens when the daemon
 * dies under pending calls.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import dbus from "dbus-next";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BusConnection, BusError, type SignalMessage } from "./bus";

const DBUS_DAEMON = "/usr/bin/dbus-daemon";

async function startDaemon(dir: string): Promise<{ proc: ChildProcess; address: string }> {
  const address = `unix:path=${path.join(dir, "bus")}`;
  const proc = spawn(DBUS_DAEMON, ["--session", "--nofork", "--nopidfile", `--address=${address}`, "--print-address=1"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  await new Promise<void>((resolve, reject) => {
    proc.once("error", reject);
    proc.stdout!.once("data", () => resolve());
  });
  return { proc, address };
}

/** A peer on the bus that answers Ping with a signal before and after its reply, and can hang. */
async function startPeer(address: string): Promise<dbus.MessageBus> {
  const peer = dbus.sessionBus({ busAddress: address });
  peer.on("error", () => undefined);
  await peer.requestName("test.Peer", 0);
  peer.addMethodHandler((msg: dbus.Message) => {
    if (msg.interface !== "test.Peer") return false;
    if (msg.member === "Ping") {
      peer.send(dbus.Message.newSignal("/test", "test.Peer", "Before", "s", ["before"]));
      peer.send(dbus.Message.newMethodReturn(msg, "s", ["pong"]));
      peer.send(dbus.Message.newSignal("/test", "test.Peer", "After", "s", ["after"]));
      return true;
    }
    if (msg.member === "Fail") {
      // dbus-next's typings declare the first argument as string; the implementation takes the call
      peer.send(dbus.Message.newError(msg as unknown as string, "test.Peer.Error.Nope", "no, thanks"));
      return true;
    }
    return msg.member === "Hang"; // never answered
  });
  return peer;
}

describe.skipIf(!existsSync(DBUS_DAEMON))("BusConnection (private dbus-daemon)", () => {
  let dir = "";
  let daemon: ChildProcess;
  let address = "";
  let peer: dbus.MessageBus;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-bus-test-"));
    ({ proc: daemon, address } = await startDaemon(dir));
    peer = await startPeer(address);
  });

  afterEach(async () => {
    peer.disconnect();
    daemon.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
  });

  const ping = { destination: "test.Peer", path: "/test", interface: "test.Peer", member: "Ping" };

  it("calls, and orders signals against the reply by arrival", async () => {
    const conn = await BusConnection.open(address);
    const signals: SignalMessage[] = [];
    conn.onSignal((m) => signals.push(m));
    await conn.addMatch("type='signal',interface='test.Peer'");
    const { body, seq } = await conn.callWithSeq(ping);
    expect(body).toEqual(["pong"]);
    await new Promise((r) => setTimeout(r, 50));
    const before = signals.find((s) => s.member === "Before")!;
    const after = signals.find((s) => s.member === "After")!;
    expect(before.seq).toBeLessThan(seq);
    expect(after.seq).toBeGreaterThan(seq);
    expect(before.body).toEqual(["before"]);
    conn.close();
  });

  it("maps error replies to BusError with the D-Bus error name, and times out", async () => {
    const conn = await BusConnection.open(address);
    const err = await conn.call({ ...ping, member: "Fail" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).dbusName).toBe("test.Peer.Error.Nope");
    expect((err as BusError).message).toBe("no, thanks");
    const t0 = Date.now();
    const timeout = await conn.call({ ...ping, member: "Hang" }, 150).catch((e: unknown) => e);
    expect((timeout as BusError).dbusName).toBe("gpudeck.Timeout");
    expect(Date.now() - t0).toBeLessThan(1000);
    conn.close();
  });

  it("rejects pending calls and reports the close when the daemon dies", async () => {
    const conn = await BusConnection.open(address);
    const closed = new Promise<string>((r) => conn.onClose(r));
    const pending = conn.call({ ...ping, member: "Hang" }, 30_000).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    daemon.kill("SIGKILL");
    expect(await closed).toMatch(/closed|error/);
    const err = (await pending) as BusError;
    expect(err.dbusName).toBe("gpudeck.Disconnected");
    expect(conn.closed).toBe(true);
    await expect(conn.call(ping)).rejects.toThrow(/closed/);
  });

  it("fails to open a socket nobody listens on, quickly", async () => {
    await expect(BusConnection.open(`unix:path=${path.join(dir, "nothing-here")}`, 2000)).rejects.toThrow(/cannot connect/);
  });
});
