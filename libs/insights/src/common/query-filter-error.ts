/** A query (legacy filter or query node) the client got wrong: a 400 naming the field (`attr`). */
export class QueryFilterError extends Error {
  constructor(
    readonly attr: string | null,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}
