/**
 * Manage panel users from a shell: `npm run user -- add|passwd|disable|enable|set|list|setup-token`.
 * Run as `node --import tsx scripts/user.ts …`; see server/auth/cli.ts for the commands.
 */
import { runUserCli } from "../server/auth/cli";
import { applyConfigFileOrExit } from "../server/config/configFile";

// GPUDECK_CONFIG: the panel's data dir (or database) from the config file, as the panel reads it
applyConfigFileOrExit(process.env, "panel", { hosts: false, log: (m) => console.error(m) });

const code = await runUserCli(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
