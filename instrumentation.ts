/** Node runtime only: graceful shutdown of the panel's live streams (see installShutdownHooks). */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { installShutdownHooks } = await import("./server/panel/instance");
  installShutdownHooks();
}
