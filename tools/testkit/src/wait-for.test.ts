import { uniqueName } from './names';
import { waitFor } from '@sightline/local-services';

describe('waitFor', () => {
  it('resolves with the first result that is not false', async () => {
    let calls = 0;
    const result = await waitFor(() => (++calls >= 3 ? `done after ${calls}` : false), { intervalMs: 1 });
    expect(result).toBe('done after 3');
  });

  it('keeps polling while the callback throws (assertion style)', async () => {
    let calls = 0;
    await waitFor(
      () => {
        calls++;
        expect(calls).toBeGreaterThanOrEqual(2);
      },
      { intervalMs: 1 },
    );
    expect(calls).toBe(2);
  });

  it('reports the last error on timeout', async () => {
    const attempt = waitFor(
      () => {
        throw new Error('store not ready');
      },
      { timeoutMs: 30, intervalMs: 5, description: 'the store' },
    );
    await expect(attempt).rejects.toThrow(/timed out after 30 ms for the store; last error: store not ready/);
  });

  it('reports the last value on timeout', async () => {
    await expect(waitFor(() => false, { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow(/last value: false/);
  });

  it('gives up at once on an error it is told to bail on', async () => {
    const started = Date.now();
    const attempt = waitFor(
      () => {
        throw new RangeError('fatal');
      },
      { timeoutMs: 5000, bailOn: (e) => e instanceof RangeError },
    );
    await expect(attempt).rejects.toThrow('fatal');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('uniqueName', () => {
  it('keeps a safe prefix and differs between calls', () => {
    const a = uniqueName('events raw/1');
    const b = uniqueName('events raw/1');
    expect(a).toMatch(/^events_raw_1_[a-z0-9]+_[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
  });
});
