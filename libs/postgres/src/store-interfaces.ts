// What every metadata store adapter (PostgreSQL's pool, PGlite in a session or a thread) offers.

/** The slice of SQL both adapters share: parameterised queries and multi-statement scripts. */
export interface QueryOptions {
  /**
   * Prepare the statement once per connection under this name (PostgreSQL skips parsing and
   * planning afterwards). For hot queries only; each name must always carry the same text.
   */
  preparedName?: string;
}

export interface Sql {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/**
 * Whose statements a store view runs: `serving` ones (capture's and decide's reads, the worker's
 * writes that capture waits for) go ahead of `background` ones (the management API's) where the
 * store runs one statement at a time for the whole process (the embedded PGlite).
 */
export type StorePriority = 'serving' | 'background';

export interface MetadataStore extends Sql {
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * The same store, its statements queued at `priority` (StorePriority); absent where
   * statements run side by side (PostgreSQL's pool), which needs no order.
   */
  withPriority?(priority: StorePriority): MetadataStore;
  /**
   * True when the store runs one statement or transaction at a time and nothing else opens its
   * data (in-process PGlite: one session, every query and transaction queued behind the one
   * running). Nothing can interleave with a transaction then, so row locks guard against nothing.
   */
  readonly oneTransactionAtATime: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}
