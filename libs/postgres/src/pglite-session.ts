import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { MetadataStore, QueryOptions, Sql } from './store-interfaces';
import { copyPgliteTemplate } from './pglite-template';

/**
 * Opens the PGlite database under `dir` in this thread (a new directory from the install's
 * migrated template unless `useTemplate` is false).
 */
export async function openPgliteSession(dir: string, useTemplate: boolean): Promise<MetadataStore & { pglite: PGlite }> {
  mkdirSync(dir, { recursive: true });
  // Loaded lazily: only the embedded mode needs the WASM build of Postgres.
  const pglite = await import('@electric-sql/pglite');
  const wrap = (db: PGlite) => wrapPglite(db, pglite);
  if (useTemplate && !existsSync(join(dir, 'PG_VERSION'))) await copyPgliteTemplate(dir, wrap);
  return wrap(await pglite.PGlite.create(dir));
}

/** A statement PGlite parsed and planned once: its parameter types and the shape of its rows. */
interface PglitePrepared {
  paramTypes: number[];
  rowDescription: BackendMessage | undefined;
}
type BackendMessage = Awaited<ReturnType<PGlite['execProtocol']>>['messages'][number];

/** The metadata store on a PGlite instance of this thread. */
export function wrapPglite(
  db: PGlite,
  { parse, protocol }: Pick<typeof import('@electric-sql/pglite'), 'parse' | 'protocol'>,
): MetadataStore & { pglite: PGlite } {
  type Tx = Pick<PGlite, 'query' | 'exec'>;
  const prepared = new Map<string, PglitePrepared>();
  const noSync = { syncToFs: false };
  const messagesOf = async (message: Uint8Array, options = noSync) => (await db.execProtocol(message, options)).messages;

  /**
   * A named statement on PGlite's one session, as pg prepares it per connection: PGlite's
   * query() parses and plans the text on every call (WebAssembly), which for decide's person
   * read is most of its cost. Serialised with every other query and transaction, as query()
   * is, so it never runs inside someone else's transaction.
   */
  const queryPrepared = <R>(name: string, text: string, params: readonly unknown[]): Promise<R[]> =>
    db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        const messages: BackendMessage[] = [];
        try {
          let statement = prepared.get(name);
          if (!statement) {
            await messagesOf(protocol.serialize.parse({ name, text }));
            const described = await messagesOf(protocol.serialize.describe({ type: 'S', name }));
            statement = { paramTypes: parse.parseDescribeStatementResults(described), rowDescription: described.find((m) => m.name === 'rowDescription') };
            prepared.set(name, statement);
          }
          const { paramTypes } = statement;
          // Serialised as query() does: the type's serializer, else the value's text.
          const values = params.map((value, i) =>
            value === null || value === undefined ? null : (db.serializers[paramTypes[i]!] ?? ((v: unknown) => String(v)))(value),
          );
          if (statement.rowDescription) messages.push(statement.rowDescription);
          messages.push(...(await messagesOf(protocol.serialize.bind({ statement: name, values }))));
          messages.push(...(await messagesOf(protocol.serialize.execute({}))));
        } finally {
          // Ends the extended-protocol exchange whatever failed, and writes through as query() does.
          await messagesOf(protocol.serialize.sync(), { syncToFs: true });
        }
        return parse.parseResults(messages, db.parsers)[0]?.rows as R[];
      }),
    );

  const sql = (target: Tx, top: boolean): Sql => ({
    async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      // Inside a transaction, the statement runs on the transaction's own queue, unprepared.
      if (top && options?.preparedName) return queryPrepared<R>(options.preparedName, text, params ?? []);
      return (await target.query<R>(text, params as unknown[] | undefined)).rows;
    },
    async exec(script: string) {
      await target.exec(script);
    },
  });
  return {
    ...sql(db, true),
    pglite: db,
    oneTransactionAtATime: true,
    transaction: (fn) => db.transaction((tx) => fn(sql(tx, false))),
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}
