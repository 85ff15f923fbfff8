/** A HogQL function: the ClickHouse name it prints as and how many arguments it takes. */
export interface FunctionSpec {
  sql: string;
  min: number;
  max: number;
}

/**
 * A table of names looked up with the client's text: a Map, so a name that exists on every
 * JavaScript object (`constructor`, `toString`, `__proto__`, `hasOwnProperty`) is not found in it.
 */
export const table = <T>(entries: Record<string, T>): ReadonlyMap<string, T> => new Map(Object.entries(entries));
