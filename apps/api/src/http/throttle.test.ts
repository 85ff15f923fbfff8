import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@sightline/http';
import { createMetrics } from '@sightline/metrics';
import { createThrottle, POSTHOG_RATE_LIMITS } from './throttle';

/** Runs the middleware for one request of key `keyId`; the error it passes on, or null. */
function call(handler: ReturnType<ReturnType<typeof createThrottle>>, keyId: number): Promise<ApiError | null> {
  const req = { principal: { keyId, userId: 1, scopes: ['*'], scopedTeams: null, organizationId: 'o' } } as unknown as Request;
  return new Promise((resolve) => {
    const next: NextFunction = (error?: unknown) => resolve((error as ApiError | undefined) ?? null);
    void handler(req, {} as Response, next);
  });
}

describe('per-key throttle (in memory, embedded mode)', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.parse('2024-01-10T15:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it("answers the 481st request of a minute with 429, Retry-After and PostHog's body; the next minute passes", async () => {
    const metrics = createMetrics();
    const general = createThrottle({ limits: POSTHOG_RATE_LIMITS, metrics })('general');
    for (let i = 0; i < 480; i++) expect(await call(general, 7)).toBeNull();
    const refused = await call(general, 7);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused!.status).toBe(429);
    expect(refused!.toBody()).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: 'Request was throttled. Expected available in 60 seconds.',
      attr: null,
    });
    expect(refused!.headers).toEqual({ 'Retry-After': '60' });
    // Another key has its own budget.
    expect(await call(general, 8)).toBeNull();
    jest.advanceTimersByTime(30_000);
    expect((await call(general, 7))!.headers['Retry-After']).toBe('30');
    jest.advanceTimersByTime(30_001);
    expect(await call(general, 7)).toBeNull();
    expect((await metrics.registry.getSingleMetric('api_requests_throttled_total')!.get()).values[0]).toMatchObject({
      labels: { throttle: 'general' },
      value: 2,
    });
  });

  it('gives ClickHouse routes 240 a minute, counted apart from the general class', async () => {
    const throttle = createThrottle({ limits: POSTHOG_RATE_LIMITS, metrics: createMetrics() });
    const clickhouse = throttle('clickhouse');
    const general = throttle('general');
    for (let i = 0; i < 240; i++) expect(await call(clickhouse, 1)).toBeNull();
    expect((await call(clickhouse, 1))?.status).toBe(429);
    expect(await call(general, 1)).toBeNull();
  });

  it('counts a browser session (no key) per user: two users never share a budget', async () => {
    const limits = { burstPerMinute: 2, sustainedPerHour: 100, clickhouseBurstPerMinute: 1, clickhouseSustainedPerHour: 1 };
    const general = createThrottle({ limits, metrics: createMetrics() })('general');
    const session = (userId: number) => {
      const req = { principal: { keyId: null, userId, scopes: ['*'], scopedTeams: null, organizationId: 'o' } } as unknown as Request;
      return new Promise<ApiError | null>(
        (resolve) => void general(req, {} as Response, (error?: unknown) => resolve((error as ApiError | undefined) ?? null)),
      );
    };
    expect(await session(1)).toBeNull();
    expect(await session(1)).toBeNull();
    expect((await session(1))?.status).toBe(429);
    expect(await session(2)).toBeNull();
  });

  it('holds the hourly budget across minutes', async () => {
    const limits = { burstPerMinute: 5, sustainedPerHour: 8, clickhouseBurstPerMinute: 1, clickhouseSustainedPerHour: 1 };
    const general = createThrottle({ limits, metrics: createMetrics() })('general');
    for (let i = 0; i < 5; i++) expect(await call(general, 1)).toBeNull();
    expect((await call(general, 1))?.status).toBe(429);
    jest.advanceTimersByTime(61_000);
    for (let i = 0; i < 2; i++) expect(await call(general, 1)).toBeNull();
    const hourly = await call(general, 1);
    expect(hourly?.status).toBe(429);
    // Counted from the first request of the hour: 61 s have passed.
    expect(Number(hourly!.headers['Retry-After'])).toBe(3600 - 61);
  });
});
