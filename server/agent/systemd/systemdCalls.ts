/**
 * How the adapter addresses systemd on the bus: its names, the match rules it listens with, and
 * the Manager/Properties calls every part of the adapter makes, all under one call timeout.
 */
import { BusError, type BusConnection, type CallRequest } from "./bus";
import { str, unwrapProps, type PlainProps } from "./dbusValues";

export const SD = "org.freedesktop.systemd1";
export const SD_PATH = "/org/freedesktop/systemd1";
export const MANAGER = "org.freedesktop.systemd1.Manager";
export const UNIT_IFACE = "org.freedesktop.systemd1.Unit";
export const JOB_IFACE = "org.freedesktop.systemd1.Job";
export const PROPS_IFACE = "org.freedesktop.DBus.Properties";
export const JOB_PATH_PREFIX = "/org/freedesktop/systemd1/job/";

export const RULE_OWNER = `type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='${SD}'`;
export const RULE_MANAGER = `type='signal',sender='${SD}',interface='${MANAGER}',path='${SD_PATH}'`;
export const RULE_JOBS = `type='signal',sender='${SD}',interface='${PROPS_IFACE}',member='PropertiesChanged',path_namespace='/org/freedesktop/systemd1/job'`;
export const unitRule = (path: string) => `type='signal',sender='${SD}',interface='${PROPS_IFACE}',member='PropertiesChanged',path='${path}'`;

/** What GetUnitFileState answers for a name with no unit file (systemd maps ENOENT to FileNotFound). */
const NO_FILE = new Set(["org.freedesktop.DBus.Error.FileNotFound", "org.freedesktop.systemd1.NoSuchUnit"]);

export class SystemdCalls {
  constructor(readonly timeoutMs: number) {}

  call(conn: BusConnection, req: Omit<CallRequest, "destination">): Promise<unknown[]> {
    return conn.call({ destination: SD, ...req }, this.timeoutMs);
  }

  /** All properties of one interface of an object ("" = every interface). */
  async getAll(conn: BusConnection, path: string, iface = ""): Promise<PlainProps> {
    return unwrapProps((await this.call(conn, { path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [iface] }))[0]);
  }

  /** All properties, plus the reply's arrival position (signals that arrived before it are already in it). */
  async getAllWithSeq(conn: BusConnection, path: string): Promise<{ props: PlainProps; seq: number }> {
    const { body, seq } = await conn.callWithSeq(
      { destination: SD, path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [""] },
      this.timeoutMs,
    );
    return { props: unwrapProps(body[0]), seq };
  }

  /** The unit's object path, loading the unit if systemd had not. */
  async loadUnit(conn: BusConnection, name: string): Promise<string> {
    const [path] = await this.call(conn, { path: SD_PATH, interface: MANAGER, member: "LoadUnit", signature: "s", body: [name] });
    return str(path);
  }

  /**
   * Whether a unit file of that name exists (enabled, disabled, static …), asked without loading
   * the unit (GetUnitFileState reads the unit search path; LoadUnit would create the unit).
   */
  async unitFileExists(conn: BusConnection, name: string): Promise<boolean> {
    try {
      await this.call(conn, { path: SD_PATH, interface: MANAGER, member: "GetUnitFileState", signature: "s", body: [name] });
      return true;
    } catch (err) {
      if (err instanceof BusError && NO_FILE.has(err.dbusName)) return false;
      throw err;
    }
  }

  /** The unit's object path if systemd has it loaded; null when it does not (NoSuchUnit). */
  async unitPathIfLoaded(conn: BusConnection, name: string): Promise<string | null> {
    try {
      const [path] = await this.call(conn, { path: SD_PATH, interface: MANAGER, member: "GetUnit", signature: "s", body: [name] });
      return str(path);
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "org.freedesktop.systemd1.NoSuchUnit") return null;
      throw err;
    }
  }
}
