import { ApiError } from '@sightline/http';
import { createSignInThrottle, SIGN_IN_COOLOFF_SECONDS } from './sign-in-throttle';

/** The error a begin…() throws, or null when it lets the attempt through. */
async function refusal(attempt: Promise<void>): Promise<ApiError | null> {
  try {
    await attempt;
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe('the sign-in throttle (in memory, as in embedded mode)', () => {
  it('refuses an e-mail from an address once it has had the limit of attempts, with PostHog’s 429', async () => {
    const throttle = createSignInThrottle({ failureLimit: 2, addressFailureLimit: 100 });
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('ANA@example.com', '10.0.0.1'))).toBeNull();
    const refused = await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'));
    expect(refused).toMatchObject({ status: 429, type: 'throttled_error', code: 'throttled', attr: null });
    expect(refused!.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds\.$/);
    const retryAfter = Number(refused!.headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(SIGN_IN_COOLOFF_SECONDS - 5);
    expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_COOLOFF_SECONDS);
    // The pair only: the same e-mail from elsewhere, and another e-mail from here, go through.
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.2'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('ben@example.com', '10.0.0.1'))).toBeNull();
  });

  it('lets through at most the limit of concurrent attempts: each is counted before it is checked', async () => {
    const throttle = createSignInThrottle({ failureLimit: 30, addressFailureLimit: 1000 });
    const results = await Promise.all(Array.from({ length: 60 }, () => refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))));
    expect(results.filter((r) => r === null)).toHaveLength(30);
    expect(results.filter((r) => r?.status === 429)).toHaveLength(30);
  });

  it('forgets the attempts of a pair that signs in, and gives the address its attempt back', async () => {
    const throttle = createSignInThrottle({ failureLimit: 2, addressFailureLimit: 2 });
    await throttle.beginSignIn('ana@example.com', '10.0.0.1');
    await throttle.signedIn('ana@example.com', '10.0.0.1');
    await throttle.beginSignIn('ana@example.com', '10.0.0.1');
    await throttle.signedIn('ana@example.com', '10.0.0.1');
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toMatchObject({ status: 429 });
  });

  it('refuses an address that tries many e-mails or setup links, and only that address', async () => {
    const throttle = createSignInThrottle({ failureLimit: 30, addressFailureLimit: 3 });
    for (const email of ['a@example.com', 'b@example.com']) expect(await refusal(throttle.beginSignIn(email, '10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginPasswordSetup('10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('c@example.com', '10.0.0.1'))).toMatchObject({ status: 429, code: 'throttled' });
    expect(await refusal(throttle.beginPasswordSetup('10.0.0.1'))).toMatchObject({ status: 429, code: 'throttled' });
    expect(await refusal(throttle.beginSignIn('c@example.com', '10.0.0.2'))).toBeNull();
  });

  it('lets attempts through when its store fails, and says so', async () => {
    const failures: unknown[] = [];
    const broken = { status: 'end' } as never;
    const throttle = createSignInThrottle({ failureLimit: 1, addressFailureLimit: 1, redis: broken, onStoreError: (e) => failures.push(e) });
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toBeNull();
    expect(await refusal(throttle.beginSignIn('ana@example.com', '10.0.0.1'))).toBeNull();
    expect(failures.length).toBeGreaterThan(0);
  });
});
