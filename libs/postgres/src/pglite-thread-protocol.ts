/** Messages between the serving thread and the PGlite thread (pglite-thread.ts). */

export interface PgliteThreadData {
  dir: string;
  useTemplate: boolean;
}

export type PgliteRequest = { id: number } & (
  | { op: 'query'; text: string; params?: readonly unknown[]; preparedName?: string; tx?: number }
  | { op: 'exec'; script: string; tx?: number }
  | { op: 'begin' }
  | { op: 'commit' | 'rollback'; tx: number }
  | { op: 'ping' | 'close' }
);

/** An error as it crosses threads: its message, name and own fields (PostgreSQL's code, detail, constraint...). */
export interface WireError {
  message: string;
  fields: Record<string, string | number | boolean | null>;
}

/** id 0 answers the opening of the database. */
export type PgliteResponse = { id: number } & ({ ok: true; rows?: unknown[]; tx?: number } | { ok: false; error: WireError });

export function errorToWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: WireError['fields'] = { name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value as string | number | boolean | null;
  }
  return { message: error.message, fields };
}

export function errorFromWire(wire: WireError): Error {
  const error = new Error(wire.message);
  // Own fields only; `name` too, so the error reads as it did in the PGlite thread.
  Object.defineProperties(
    error,
    Object.fromEntries(Object.entries(wire.fields).map(([key, value]) => [key, { value, enumerable: key !== 'name', writable: true, configurable: true }])),
  );
  return error;
}
