import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '@sightline/http';
import type { Metrics } from '@sightline/metrics';
import type { ThrottleClass } from './route-registry';

/** Requests per window for one personal API key; PostHog's DRF throttle rates by default. */
export interface RateLimits {
  burstPerMinute: number;
  sustainedPerHour: number;
  clickhouseBurstPerMinute: number;
  clickhouseSustainedPerHour: number;
}

export const POSTHOG_RATE_LIMITS: RateLimits = {
  burstPerMinute: 480,
  sustainedPerHour: 4800,
  clickhouseBurstPerMinute: 240,
  clickhouseSustainedPerHour: 1200,
};

export interface ThrottleOptions {
  limits: RateLimits;
  /** Distributed mode: counters shared by every api process. Absent: in this process's memory (embedded mode). */
  redis?: Redis;
  metrics: Metrics;
  onStoreError?: (error: unknown) => void;
  /** Prefix of the Redis keys; default `sightline:throttle`. */
  keyPrefix?: string;
}

/** PostHog's 429 body, with the seconds until the window frees a request. */
export function throttledError(retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'throttled_error', 'throttled', `Request was throttled. Expected available in ${retryAfterSeconds} seconds.`, null, {
    'Retry-After': String(retryAfterSeconds),
  });
}

/**
 * Per-key throttles (rate-limiter-flexible): a burst window of a minute and a sustained one of an
 * hour, for the general class and the stricter ClickHouse class. A request counts against both
 * windows of its route's class. When the store fails (Redis down) the request passes and is
 * counted in `api_rate_limit_failed_open_total`: an outage of the limiter is not an outage of the API.
 */
export function createThrottle(options: ThrottleOptions): (kind: ThrottleClass) => RequestHandler {
  const limiter = (name: string, points: number, duration: number): RateLimiterAbstract =>
    options.redis
      ? new RateLimiterRedis({
          storeClient: options.redis,
          keyPrefix: `${options.keyPrefix ?? 'sightline:throttle'}:${name}`,
          points,
          duration,
          rejectIfRedisNotReady: true,
        })
      : new RateLimiterMemory({ keyPrefix: name, points, duration });
  const { limits } = options;
  const windows: Record<ThrottleClass, RateLimiterAbstract[]> = {
    general: [limiter('burst', limits.burstPerMinute, 60), limiter('sustained', limits.sustainedPerHour, 3600)],
    clickhouse: [limiter('clickhouse_burst', limits.clickhouseBurstPerMinute, 60), limiter('clickhouse_sustained', limits.clickhouseSustainedPerHour, 3600)],
  };

  return (kind) => async (req, _res, next) => {
    const principal = req.principal;
    if (!principal) return next();
    // The organisation id (a random uuid per instance) keeps two instances sharing one Redis apart.
    // A browser session counts per user, as PostHog's throttles count a logged-in user.
    const key = principal.keyId === null ? `user:${principal.organizationId}:${principal.userId}` : `key:${principal.organizationId}:${principal.keyId}`;
    const outcomes = await Promise.allSettled(windows[kind].map((window) => window.consume(key)));
    let waitMs = 0;
    let storeError: unknown = null;
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') continue;
      if (outcome.reason instanceof RateLimiterRes) waitMs = Math.max(waitMs, outcome.reason.msBeforeNext);
      else storeError = outcome.reason ?? new Error('rate limiter store failed');
    }
    if (storeError !== null) {
      options.metrics.rateLimitFailedOpen.inc();
      options.onStoreError?.(storeError);
    }
    if (waitMs === 0) return next();
    options.metrics.requestsThrottled.inc({ throttle: kind });
    next(throttledError(Math.max(1, Math.ceil(waitMs / 1000))));
  };
}
