/** Node socket errors: the dependency is unreachable, not the data wrong. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ERR_SOCKET_CLOSED',
  'UND_ERR_SOCKET',
]);
const NETWORK_MESSAGE =
  /timeout|timed out|socket hang up|connection (terminated|closed|ended|refused)|ECONNREFUSED|ECONNRESET|Client has encountered a connection error/i;

const codeOf = (error: unknown) => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function isNetworkFailure(error: unknown): boolean {
  const code = codeOf(error);
  return (typeof code === 'string' && NETWORK_CODES.has(code)) || NETWORK_MESSAGE.test(messageOf(error));
}

/**
 * PostgreSQL: connection loss, serialization failures and deadlocks (class 08, 40), resource
 * exhaustion (53), shutdown (57), lock timeouts (55) and a unique-key race between two
 * batches (23505) clear up on retry; data and syntax errors (22, 23, 42) never do.
 */
export function isPostgresOutage(error: unknown): boolean {
  const code = codeOf(error);
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return ['08', '40', '53', '55', '57', '58'].includes(code.slice(0, 2)) || code === '23505';
  return isNetworkFailure(error);
}

/** ClickHouse error codes that mean "these rows can never be inserted" (parse and type errors). */
const CLICKHOUSE_DATA_ERRORS = new Set(['6', '26', '27', '38', '41', '53', '69', '70', '72', '117', '130', '131']);

/**
 * ClickHouse: a server error other than a data error is an outage (overloaded, too many
 * parts, memory); so is no answer at all (refused, reset, timed out).
 */
export function isClickHouseOutage(error: unknown): boolean {
  const code = codeOf(error);
  if (typeof code === 'string' && /^\d+$/.test(code)) return !CLICKHOUSE_DATA_ERRORS.has(code);
  return isNetworkFailure(error);
}

/** The bus refusing a send (dead letters) is always worth retrying. */
export const alwaysAnOutage = () => true;
