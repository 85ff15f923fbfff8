/**
 * Bounds on what one log line may carry. Logged objects often hold values a client chose (a
 * flag key, a date string, a database error quoting its input), and a client may send megabytes:
 * cut them here, once for every logger, instead of trusting each call site.
 */
export const LOG_VALUE_LIMITS = Object.freeze({ maxStringLength: 2_000, maxArrayItems: 50, maxKeys: 100, maxDepth: 6 });

function boundedString(value: string): string {
  const over = value.length - LOG_VALUE_LIMITS.maxStringLength;
  return over > 0 ? `${value.slice(0, LOG_VALUE_LIMITS.maxStringLength)}…[${over} more characters]` : value;
}

/**
 * An error with its message, stack and own fields bounded, still an instance of its class so
 * pino's error serializer names its type as before.
 */
function boundedError(error: Error, depth: number): Error {
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const [key, child] of Object.entries(error)) (copy as unknown as Record<string, unknown>)[key] = boundLogValue(child, depth + 1);
  Object.defineProperties(copy, {
    message: { value: boundedString(error.message), enumerable: false, writable: true },
    stack: { value: error.stack === undefined ? undefined : boundedString(error.stack), enumerable: false, writable: true },
  });
  if (error.cause !== undefined) copy.cause = boundLogValue(error.cause, depth + 1);
  return copy;
}

/** A copy of `value` within LOG_VALUE_LIMITS. */
export function boundLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return boundedString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= LOG_VALUE_LIMITS.maxDepth) return '[nested too deep to log]';
  if (value instanceof Error) return boundedError(value, depth);
  if (Array.isArray(value)) {
    const items = value.slice(0, LOG_VALUE_LIMITS.maxArrayItems).map((item) => boundLogValue(item, depth + 1));
    if (value.length > LOG_VALUE_LIMITS.maxArrayItems) items.push(`…[${value.length - LOG_VALUE_LIMITS.maxArrayItems} more items]`);
    return items;
  }
  // Buffers, dates and other class instances keep their own JSON form (toJSON), bounded as a string.
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
    const json = (value as { toJSON?: () => unknown }).toJSON?.();
    return json === undefined ? boundLogValue({ ...value }, depth) : boundLogValue(json, depth);
  }
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [key, child] of Object.entries(value)) {
    if (kept++ === LOG_VALUE_LIMITS.maxKeys) {
      out['…'] = 'more keys not logged';
      break;
    }
    out[boundedString(key)] = boundLogValue(child, depth + 1);
  }
  return out;
}
