import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { throttledError } from '../http/throttle';

/** How long failed sign-ins are remembered, and how long a locked-out pair waits (PostHog's AXES_COOLOFF_TIME). */
export const SIGN_IN_COOLOFF_SECONDS = 10 * 60;

export interface SignInThrottleOptions {
  /** Failures one e-mail may have from one client address within the cool-off before it is refused. */
  failureLimit: number;
  /** Failures one client address may have within the cool-off, over every e-mail and setup link, before it is refused. */
  addressFailureLimit: number;
  /** Distributed mode: counters shared by every api process. Absent: this process's memory. */
  redis?: Redis;
  keyPrefix?: string;
  /** Told when the counter store fails; the attempt then goes ahead (an outage of the limiter is not one of sign-in). */
  onStoreError?: (error: unknown) => void;
}

export interface SignInThrottle {
  /**
   * Counts a sign-in attempt before its password is checked, and throws PostHog's 429
   * `throttled` error once the pair (e-mail, address) or the address has used its allowance.
   */
  beginSignIn(email: string, ip: string): Promise<void>;
  /** A successful sign-in: the pair's failures are forgotten (as django-axes does) and the address's attempt is given back. */
  signedIn(email: string, ip: string): Promise<void>;
  /** Counts a password-setup attempt against the address, before its token is looked up. */
  beginPasswordSetup(ip: string): Promise<void>;
  /** A setup link that worked: the address's attempt is given back. */
  passwordSetUp(ip: string): Promise<void>;
}

/**
 * Failed sign-ins counted per (e-mail, client address) pair, as PostHog's django-axes set-up does
 * (AXES_LOCKOUT_PARAMETERS = ip_address and username together): one address guessing one user's
 * password is stopped, while colleagues behind the same NAT signing in to their own accounts are
 * not. Beside it, a looser count per address alone over every e-mail (and every setup-link
 * attempt), so trying one password against many e-mails, or many tokens, is stopped too.
 *
 * Every attempt is counted before its password is checked, by one atomic increment (Redis INCR in
 * a script, or this process's memory), and a success gives its count back: so N concurrent wrong
 * passwords check at most the limit of them, where a check-then-record pair let all N through.
 */
export function createSignInThrottle(options: SignInThrottleOptions): SignInThrottle {
  const prefix = options.keyPrefix ?? 'sightline:sign_in';
  const limiter = (name: string, points: number): RateLimiterAbstract =>
    options.redis
      ? new RateLimiterRedis({
          storeClient: options.redis,
          keyPrefix: `${prefix}:${name}`,
          points,
          duration: SIGN_IN_COOLOFF_SECONDS,
          rejectIfRedisNotReady: true,
        })
      : new RateLimiterMemory({ keyPrefix: `sign_in_${name}`, points, duration: SIGN_IN_COOLOFF_SECONDS });
  const pairs = limiter('failures', options.failureLimit);
  const addresses = limiter('address', options.addressFailureLimit);
  const pairKey = (email: string, ip: string) => `${email.toLowerCase()}|${ip}`;

  /** One attempt counted; a 429 once over the limit; a store failure lets it through. */
  const consume = async (store: RateLimiterAbstract, key: string) => {
    try {
      await store.consume(key, 1);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw throttledError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
      options.onStoreError?.(rejection);
    }
  };
  const guarded = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      options.onStoreError?.(error);
    }
  };

  return {
    async beginSignIn(email, ip) {
      await consume(addresses, ip);
      await consume(pairs, pairKey(email, ip));
    },
    async signedIn(email, ip) {
      await guarded(() => pairs.delete(pairKey(email, ip)));
      await guarded(() => addresses.reward(ip, 1));
    },
    async beginPasswordSetup(ip) {
      await consume(addresses, ip);
    },
    async passwordSetUp(ip) {
      await guarded(() => addresses.reward(ip, 1));
    },
  };
}
