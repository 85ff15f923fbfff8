import type { Redis } from 'ioredis';
import type { accessEnv } from '@sightline/config';
import type { Logger } from '@sightline/logger';
import type { RateLimits } from './throttle';

/** Management API limits and browser access; every field has a default. */
export interface AccessOptions {
  /** Per personal API key; absent: no rate limits (tests, benchmarks). */
  rateLimits?: RateLimits;
  /** Shared throttle counters (distributed mode); absent: in-process memory (embedded mode). */
  rateLimitRedis?: Redis;
  /** Prefix of the throttle's Redis keys (tests sharing one Redis); default `sightline:throttle`. */
  rateLimitKeyPrefix?: string;
  /** Origins allowed to call the management API from a browser; default none. */
  corsOrigins?: readonly string[];
  /** Largest JSON body of a management request; default 5 MB. */
  bodyLimitBytes?: number;
  /** Failed sign-ins one e-mail may have from one address in 10 minutes before 429; default 30 (PostHog's). */
  loginFailureLimit?: number;
  /** Failed sign-ins and setup attempts one address may have in 10 minutes over every e-mail before 429; default 100. */
  loginAddressFailureLimit?: number;
  /** Shared failed sign-in counters (distributed mode); absent: in-process memory. */
  loginThrottleRedis?: Redis;
}

type AccessConfig = {
  [K in keyof typeof accessEnv]: (typeof accessEnv)[K]['default'] extends number ? number : (typeof accessEnv)[K]['default'] extends boolean ? boolean : string;
};

/**
 * The management API's access settings from configuration. With REDIS_URL the throttle counters
 * (and the failed sign-in counters) live in Redis (shared by every api process), else in memory. The Redis client queues nothing
 * while disconnected, so a Redis outage fails a limit check at once (and the request passes).
 */
export function accessOptionsFromConfig(
  config: AccessConfig & { REDIS_URL?: string },
  logger: Logger,
): { access: AccessOptions; trustProxy: string; close: () => Promise<void> } {
  // The sign-in throttle is always on, so with REDIS_URL its counters are shared even when the rate limits are off.
  // ioredis is loaded only when configured: the embedded mode never needs it, and it is start time.
  const redis: Redis | undefined = config.REDIS_URL
    ? new (require('ioredis') as typeof import('ioredis')).Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
    : undefined;
  redis?.on('error', (err) => logger.debug({ err }, 'rate limiter redis'));
  return {
    access: {
      rateLimits: config.RATE_LIMITS_ENABLED
        ? {
            burstPerMinute: config.RATE_LIMIT_BURST_PER_MINUTE,
            sustainedPerHour: config.RATE_LIMIT_SUSTAINED_PER_HOUR,
            clickhouseBurstPerMinute: config.RATE_LIMIT_CLICKHOUSE_BURST_PER_MINUTE,
            clickhouseSustainedPerHour: config.RATE_LIMIT_CLICKHOUSE_SUSTAINED_PER_HOUR,
          }
        : undefined,
      rateLimitRedis: config.RATE_LIMITS_ENABLED ? redis : undefined,
      loginFailureLimit: config.LOGIN_FAILURE_LIMIT,
      loginAddressFailureLimit: config.LOGIN_ADDRESS_FAILURE_LIMIT,
      loginThrottleRedis: redis,
      corsOrigins: config.CORS_ALLOWED_ORIGINS.split(','),
      bodyLimitBytes: config.API_BODY_LIMIT_BYTES,
    },
    trustProxy: config.TRUSTED_PROXIES,
    close: async () => {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
