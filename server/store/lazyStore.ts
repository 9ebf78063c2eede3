/**
 * The panel's database, opened on first use and shared by everything in the process. Opening is
 * asynchronous (migrations, a PostgreSQL pool); a failed open is reported to the caller and tried
 * again on the next use, so a database that comes up late does not need a panel restart.
 */
import { openStore, type OpenStoreOptions, type Store } from "./database";

export class LazyStore {
  private opening: Promise<Store> | null = null;
  private closed = false;

  constructor(private readonly options: OpenStoreOptions) {}

  get(): Promise<Store> {
    if (this.closed) return Promise.reject(new Error("the panel is shutting down"));
    this.opening ??= openStore(this.options).catch((err: unknown) => {
      this.opening = null;
      throw err;
    });
    return this.opening;
  }

  async close(): Promise<void> {
    this.closed = true;
    const opening = this.opening;
    this.opening = null;
    if (opening) await (await opening.catch(() => null))?.close();
  }
}
