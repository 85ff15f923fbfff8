/** A HogQL expression or query that cannot be used here; the message names what, `start` where (a character offset of the text) when known. */
export class HogQLError extends Error {
  constructor(
    message: string,
    readonly start?: number,
  ) {
    super(message);
  }
}

/** A parsed expression (PostHog's AST as JSON). */
export interface HogQLNode {
  node: string;
  [key: string]: unknown;
}
