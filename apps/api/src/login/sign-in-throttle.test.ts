import { ApiError } from '@sightline/http';
import { createSignInThrottle, SIGN_IN_COOLOFF_SECONDS } from './sign-in-throttle';

/** The error check() throws, or null when it lets the attempt through. */
async function refusal(check: Promise<void>): Promise<ApiError | null> {
  try {
    await check;
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe('the sign-in throttle (in memory, as in embedded mode)', () => {
  it('refuses an e-mail from an address once it has had the limit of failures, with PostHog’s 429', async () => {
    const throttle = createSignInThrottle({ failureLimit: 2 });
    await throttle.recordFailure('ana@example.com', '10.0.0.1');
    expect(await refusal(throttle.check('ana@example.com', '10.0.0.1'))).toBeNull();
    await throttle.recordFailure('ANA@example.com', '10.0.0.1');
    const refused = await refusal(throttle.check('ana@example.com', '10.0.0.1'));
    expect(refused).toMatchObject({ status: 429, type: 'throttled_error', code: 'throttled', attr: null });
    expect(refused!.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds\.$/);
    const retryAfter = Number(refused!.headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(SIGN_IN_COOLOFF_SECONDS - 5);
    expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_COOLOFF_SECONDS);
    // The pair only: the same e-mail from elsewhere, and another e-mail from here, go through.
    expect(await refusal(throttle.check('ana@example.com', '10.0.0.2'))).toBeNull();
    expect(await refusal(throttle.check('ben@example.com', '10.0.0.1'))).toBeNull();
  });

  it('forgets the failures of a pair that signs in', async () => {
    const throttle = createSignInThrottle({ failureLimit: 2 });
    await throttle.recordFailure('ana@example.com', '10.0.0.1');
    await throttle.recordSuccess('ana@example.com', '10.0.0.1');
    await throttle.recordFailure('ana@example.com', '10.0.0.1');
    expect(await refusal(throttle.check('ana@example.com', '10.0.0.1'))).toBeNull();
  });
});
