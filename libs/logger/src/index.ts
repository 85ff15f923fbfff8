import pino, { type Logger } from 'pino';

export type { Logger };

// Keys whose values must never reach a log line, wherever they appear in an object.
const REDACT = ['authorization', 'password', 'api_key', 'token', 'personal_api_key', 'DATABASE_URL', 'secret'];

export function createLogger(options: { service: string; level?: string }): Logger {
  return pino({
    level: options.level ?? 'info',
    base: { service: options.service },
    redact: {
      paths: [...REDACT, ...REDACT.map((k) => `*.${k}`), 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
