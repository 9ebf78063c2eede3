/** Command-line flags every bench script takes. */
export const smoke = process.argv.includes("--smoke");

/** A number from `--name=value`, else the default (the full size, or the smoke size with --smoke). */
export function numberArg(name: string, full: number, smokeSize: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (arg) {
    const v = Number(arg.slice(name.length + 3));
    if (Number.isFinite(v) && v > 0) return v;
    throw new Error(`--${name} must be a positive number (got ${arg})`);
  }
  return smoke ? smokeSize : full;
}

/** Run a bench's main: errors print and exit 2; missed targets do not change the exit code. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`bench failed: ${err.stack ?? err.message}`);
      process.exit(2);
    },
  );
}
