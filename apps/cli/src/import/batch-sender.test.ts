import { describeNetworkError, HostUnreachableError, sendBatch } from './batch-sender';

const networkError = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause });

describe('sending a batch', () => {
  it('returns the events the service says it dropped', async () => {
    const answer = new Response(JSON.stringify({ status: 1, dropped: [{ index: 2, reason: 'nested_too_deeply' }] }), { status: 200 });
    const dropped = await sendBatch('http://h/batch/', '{}', { maxAttempts: 1, onRetry: () => undefined, fetch: async () => answer });
    expect(dropped).toEqual([{ index: 2, reason: 'nested_too_deeply' }]);
    const plain = await sendBatch('http://h/batch/', '{}', { maxAttempts: 1, onRetry: () => undefined, fetch: async () => new Response('{"status":1}') });
    expect(plain).toEqual([]);
  });

  it('names the host when a connection is refused, and gives up early on a host that never answered', async () => {
    const refused = networkError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:59999'), { code: 'ECONNREFUSED' }));
    const retries: string[] = [];
    const sending = sendBatch('http://127.0.0.1:59999/batch/', '{}', {
      maxAttempts: 30,
      contact: { answered: false },
      onRetry: (reason) => retries.push(reason),
      // The backoff's waits (up to 7.5 s in all) are not what this test is about.
      wait: async () => undefined,
      fetch: async () => {
        throw refused;
      },
    });
    await expect(sending).rejects.toThrow(HostUnreachableError);
    await expect(sending).rejects.toThrow('cannot reach http://127.0.0.1:59999/batch/: connection refused by 127.0.0.1:59999');
    expect(retries).toHaveLength(4);
    expect(retries[0]).toContain('connection refused by 127.0.0.1:59999');
  });

  it('stops at once on a host name that does not resolve', async () => {
    const missing = networkError(Object.assign(new Error('getaddrinfo ENOTFOUND nope.invalid'), { code: 'ENOTFOUND' }));
    const retries: string[] = [];
    const sending = sendBatch('http://nope.invalid/batch/', '{}', {
      maxAttempts: 30,
      contact: { answered: false },
      onRetry: (reason) => retries.push(reason),
      fetch: async () => {
        throw missing;
      },
    });
    await expect(sending).rejects.toThrow('host nope.invalid not found (ENOTFOUND)');
    expect(retries).toEqual([]);
  });

  it('describes errors fetch only calls "fetch failed"', () => {
    expect(describeNetworkError(networkError(Object.assign(new Error('x'), { code: 'ECONNRESET' })), 'http://a:1/batch/').text).toBe('ECONNRESET from a:1: x');
    expect(describeNetworkError(networkError(new Error('bad port')), 'http://a:1/batch/')).toEqual({ text: 'a:1: bad port', permanent: true });
  });
});
