import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { throttledError } from '../http/throttle';

/** How long failed sign-ins are remembered, and how long a locked-out pair waits (PostHog's AXES_COOLOFF_TIME). */
export const SIGN_IN_COOLOFF_SECONDS = 10 * 60;

export interface SignInThrottleOptions {
  /** Failures one e-mail may have from one client address within the cool-off before it is refused. */
  failureLimit: number;
  /** Distributed mode: counters shared by every api process. Absent: this process's memory. */
  redis?: Redis;
  keyPrefix?: string;
  /** Told when the counter store fails; the attempt then goes ahead (an outage of the limiter is not one of sign-in). */
  onStoreError?: (error: unknown) => void;
}

export interface SignInThrottle {
  /** Throws PostHog's 429 `throttled` error while the e-mail is locked out from this address. */
  check(email: string, ip: string): Promise<void>;
  recordFailure(email: string, ip: string): Promise<void>;
  /** A successful sign-in clears the pair's failures, as django-axes does by default. */
  recordSuccess(email: string, ip: string): Promise<void>;
}

/**
 * Failed sign-ins counted per (e-mail, client address) pair, as PostHog's django-axes set-up does
 * (AXES_LOCKOUT_PARAMETERS = ip_address and username together): one address guessing one user's
 * password is stopped, while colleagues behind the same NAT signing in to their own accounts are not.
 */
export function createSignInThrottle(options: SignInThrottleOptions): SignInThrottle {
  const limiter: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({
        storeClient: options.redis,
        keyPrefix: `${options.keyPrefix ?? 'sightline:sign_in'}:failures`,
        points: options.failureLimit,
        duration: SIGN_IN_COOLOFF_SECONDS,
        rejectIfRedisNotReady: true,
      })
    : new RateLimiterMemory({ keyPrefix: 'sign_in_failures', points: options.failureLimit, duration: SIGN_IN_COOLOFF_SECONDS });
  const keyOf = (email: string, ip: string) => `${email.toLowerCase()}|${ip}`;
  const guarded = async <T>(work: () => Promise<T>): Promise<T | null> => {
    try {
      return await work();
    } catch (error) {
      options.onStoreError?.(error);
      return null;
    }
  };
  return {
    async check(email, ip) {
      const state = await guarded(() => limiter.get(keyOf(email, ip)));
      if (state && state.consumedPoints >= options.failureLimit) throw throttledError(Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
    },
    async recordFailure(email, ip) {
      // penalty, not consume: it never rejects, the next check decides.
      await guarded(() => limiter.penalty(keyOf(email, ip), 1));
    },
    async recordSuccess(email, ip) {
      await guarded(() => limiter.delete(keyOf(email, ip)));
    },
  };
}
