/**
 * `npm run doctor` (and `gpudeck doctor`): checks this machine's setup for the agent and/or the
 * panel and says what is wrong and how to fix it; see server/doctor/cli.ts.
 */
import { runDoctorCli } from "../server/doctor/cli";

process.exitCode = await runDoctorCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
