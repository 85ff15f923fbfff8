import { withDeadline } from './index';

describe('withDeadline', () => {
  it('passes an outcome that arrives in time through, value or error', async () => {
    await expect(withDeadline(Promise.resolve(7), 1_000, () => new Error('late'))).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('own')), 1_000, () => new Error('late'))).rejects.toThrow('own');
  });

  it("rejects with the caller's error once the deadline passes", async () => {
    class StoreTimeout extends Error {}
    const never = new Promise<number>(() => undefined);
    await expect(withDeadline(never, 5, () => new StoreTimeout('store did not answer'))).rejects.toBeInstanceOf(StoreTimeout);
  });
});
