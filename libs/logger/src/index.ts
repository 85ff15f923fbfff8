import pino, { type Logger } from 'pino';
import { boundLogValue } from './bounded-log-values';

export { boundLogValue, LOG_VALUE_LIMITS } from './bounded-log-values';

export type { Logger };

// Keys whose values must never reach a log line, wherever they appear in an object.
const REDACT = ['authorization', 'password', 'api_key', 'token', 'personal_api_key', 'DATABASE_URL', 'secret'];

/** `destination`: where lines go (default stdout); tests pass a stream to read them back. */
export function createLogger(options: { service: string; level?: string; destination?: pino.DestinationStream }): Logger {
  const pinoOptions: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: options.service },
    redact: {
      paths: [...REDACT, ...REDACT.map((k) => `*.${k}`), 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: (object) => boundLogValue(object) as Record<string, unknown> },
    // Messages are often built from values too (`logger.warn(\`bad key ${key}\`)`).
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? (boundLogValue(arg) as string) : arg)) as Parameters<typeof method>);
      },
    },
  };
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
