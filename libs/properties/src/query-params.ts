/**
 * Named query parameters collected while compiling: every value and key a client sent goes
 * here and reaches ClickHouse bound (`{p3:String}`), never spliced into the SQL text.
 */
export class QueryParams {
  readonly values: Record<string, unknown> = {};
  private next = 0;
  constructor(private readonly prefix = 'p') {}

  /** A placeholder for `value` of ClickHouse type `type`. */
  add(value: unknown, type: string): string {
    const name = `${this.prefix}${this.next++}`;
    // An integer-valued number past 2^53 (1e19, a rounded Int64 bound) goes as its decimal text,
    // which ClickHouse reads as the placeholder's type: the embedded engine's binder refuses such
    // numbers outright rather than bind a value that may have lost digits.
    this.values[name] = typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value).toString() : value;
    return `{${name}:${type}}`;
  }
}
