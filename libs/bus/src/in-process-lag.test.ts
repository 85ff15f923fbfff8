import { silentLogger } from '@sightline/logger';
import { createInProcessBus } from './in-process-bus';

describe('in-process bus lag', () => {
  it('counts the messages sent and not yet handled, per partition, all owned by the one consumer', async () => {
    const bus = createInProcessBus(silentLogger(), { partitions: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const sub = await bus.subscribe({
      groupId: 'g',
      topic: 't',
      handler: () => {
        entered();
        return gate;
      },
    });
    const sent = bus.send(
      't',
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: 'v' })),
    );
    // A batch is in the handler; the other partition's may be too, or still queued: both count.
    await inHandler;
    await new Promise<void>((resolve) => setImmediate(resolve));
    const lag = await sub.lag!();
    expect(lag.map((p) => p.partition)).toEqual([0, 1]);
    expect(lag.every((p) => p.owned)).toBe(true);
    expect(lag.reduce((sum, p) => sum + p.lag, 0)).toBe(10);
    release();
    await sent;
    expect((await sub.lag!()).map((p) => p.lag)).toEqual([0, 0]);
    await sub.stop();
    await bus.close();
  });
});
