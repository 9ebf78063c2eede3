/**
 * The panel's database, opened on first use and shared by everything in the process. Opening is
 * asynchronous (migrations, a PostgreSQL pool); a failed open is reported to the caller and tried
 * again on the next use, so a database that comes up late does not need a panel restart.
 */
import { openStore, type Dialect, type OpenStoreOptions, type Store } from "./database";
import { DatabaseUnavailableError, unreachableReason } from "./unavailable";

/** Where code that needs the database gets it: the process's LazyStore, or one open store (tests, the CLI). */
export interface StoreSource {
  /** which database, known before it is open (for messages) */
  readonly dialect: Dialect;
  get(): Promise<Store>;
}

/** A StoreSource over a store that is open already. */
export function fixedStore(store: Store): StoreSource {
  return { dialect: store.dialect, get: async () => store };
}

export class LazyStore implements StoreSource {
  private opening: Promise<Store> | null = null;
  private closed = false;
  readonly dialect: Dialect;

  constructor(private readonly options: OpenStoreOptions) {
    this.dialect = options.databaseUrl ? "postgres" : "sqlite";
  }

  get(): Promise<Store> {
    if (this.closed) return Promise.reject(new DatabaseUnavailableError("the panel is shutting down"));
    this.opening ??= openStore(this.options).catch((err: unknown) => {
      this.opening = null;
      throw new DatabaseUnavailableError(unreachableReason(err), { cause: err });
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
