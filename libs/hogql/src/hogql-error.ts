/** A HogQL expression or query that cannot be used here; the message names what. */
export class HogQLError extends Error {}

/** A parsed expression (PostHog's AST as JSON). */
export interface HogQLNode {
  node: string;
  [key: string]: unknown;
}
