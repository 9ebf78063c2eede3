/**
 * The first-run setup link (creates the first admin; one use, 1 h). Printed only to a terminal
 * someone is looking at: under systemd the panel's output goes to the journal, which other users
 * and log shippers read, so there the link goes to a file only the panel's user can read
 * (`<data dir>/setup-link`, mode 0600), and the log says where it is.
 *
 * Replicas on one PostgreSQL (`shared`): a replica starting while another's link is still valid
 * issues none of its own (a new one would void the link someone may be about to open) and says so.
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PanelAuth } from "../auth/panelAuth";

export const SETUP_LINK_FILE = "setup-link";

export interface SetupAnnouncement {
  auth: Pick<PanelAuth, "users">;
  dataDir: string;
  /** the panel's URL, the link's base */
  base: string;
  /** the panel's output is a terminal (not the journal or a pipe) */
  interactive: boolean;
  log: (msg: string) => void;
  /** the database is shared with other replicas: keep a setup link one of them issued */
  shared?: boolean;
}

export async function announceSetup({ auth, dataDir, base, interactive, log, shared }: SetupAnnouncement): Promise<void> {
  const file = path.join(dataDir, SETUP_LINK_FILE);
  if (shared && (await auth.users.setupPending())) {
    log("no admin account yet: another panel replica (or `npm run user -- setup-token`) issued a setup link that is still valid; use that one");
    log("(or: npm run user -- setup-token for a new one, which voids it)");
    return;
  }
  const setup = await auth.users.ensureSetupToken();
  if (!setup) {
    rmSync(file, { force: true }); // an admin exists: a link left from an earlier start is void anyway
    return;
  }
  // A #fragment is never sent to servers, proxies or in Referer headers.
  const link = `${base}/setup#token=${setup.token}`;
  if (interactive) {
    log(`no admin account yet: create one within 1 h at ${link}`);
  } else {
    rmSync(file, { force: true });
    writeFileSync(file, `${link}\n`, { mode: 0o600, flag: "wx" });
    log(`no admin account yet: the one-time setup link (valid 1 h) is in ${file}, readable only by this user`);
  }
  log("(or later: npm run user -- setup-token, or npm run user -- add NAME --role admin)");
}
