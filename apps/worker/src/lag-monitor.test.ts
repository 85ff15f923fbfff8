import type { PartitionLag, Subscription } from '@sightline/bus';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createLagMonitor, LagGrowth, type MonitoredSubscription } from './lag-monitor';

describe('LagGrowth', () => {
  it('is growing while every sample is at least where the window opened and the latest is above it', () => {
    const g = new LagGrowth();
    g.observe(10, 0);
    expect(g.growingForMs(0)).toBe(0);
    g.observe(10, 1000);
    expect(g.growingForMs(1000)).toBe(0); // a constant backlog is not growing
    g.observe(15, 2000);
    expect(g.growingForMs(2000)).toBe(2000);
    g.observe(12, 3000); // smaller than 15 but not than 10: still growing since 0
    expect(g.growingForMs(3000)).toBe(3000);
    g.observe(9, 4000); // below the window's start: a new window
    expect(g.growingForMs(4000)).toBe(0);
    g.observe(20, 5000);
    expect(g.growingForMs(6000)).toBe(2000);
    g.observe(0, 7000);
    expect(g.growingForMs(7000)).toBe(0);
  });
});

describe('lag monitor', () => {
  let clock = 0;
  const lags: Record<string, PartitionLag[]> = {};
  const subscription = (name: string): MonitoredSubscription => ({
    name,
    groupId: `${name}-writer`,
    topic: name,
    sub: { stop: async () => undefined, idleMs: () => 0, lag: async () => lags[name]! } as Subscription,
  });
  const setup = (readinessTimeoutMs: number) => {
    clock = 0;
    const metrics = createMetrics();
    const monitor = createLagMonitor({
      subscriptions: () => [subscription('events'), subscription('events_historical')],
      metrics,
      logger: silentLogger(),
      pollMs: 1000,
      readinessConsumer: 'events',
      readinessTimeoutMs,
      now: () => clock,
    });
    return { metrics, monitor };
  };
  const at = async (ms: number, monitor: ReturnType<typeof setup>['monitor'], events: number[], historical = [0]) => {
    clock = ms;
    lags['events'] = events.map((lag, partition) => ({ partition, lag, owned: partition < 2 }));
    lags['events_historical'] = historical.map((lag, partition) => ({ partition, lag, owned: true }));
    await monitor.sample();
  };
  const ready = async (monitor: ReturnType<typeof setup>['monitor']) => {
    try {
      await monitor.readiness.check();
      return true;
    } catch {
      return false;
    }
  };

  it('exports the lag of the partitions this worker consumes, and the whole group’s', async () => {
    const { metrics, monitor } = setup(60_000);
    await at(0, monitor, [3, 4, 100]);
    const text = await metrics.registry.metrics();
    expect(text).toContain('worker_consumer_lag_messages{group="events-writer",topic="events",partition="0"} 3');
    expect(text).toContain('worker_consumer_lag_messages{group="events-writer",topic="events",partition="1"} 4');
    // Partition 2 belongs to another worker: it reports it.
    expect(text).not.toContain('partition="2"');
    expect(text).toContain('worker_consumer_group_lag_messages{group="events-writer",topic="events"} 107');
  });

  it('stops reporting a partition that moved to another worker', async () => {
    const { metrics, monitor } = setup(60_000);
    await at(0, monitor, [3, 4]);
    clock = 1000;
    lags['events'] = [
      { partition: 0, lag: 1, owned: true },
      { partition: 1, lag: 4, owned: false },
    ];
    await monitor.sample();
    const text = await metrics.registry.metrics();
    expect(text).toContain('worker_consumer_lag_messages{group="events-writer",topic="events",partition="0"} 1');
    expect(text).not.toContain('topic="events",partition="1"');
  });

  it('fails readiness once the live lag has grown for longer than the timeout, and recovers when it shrinks', async () => {
    const { metrics, monitor } = setup(60_000);
    await at(0, monitor, [10, 10, 0]);
    await at(30_000, monitor, [20, 10, 0]);
    expect(await ready(monitor)).toBe(true);
    await at(61_000, monitor, [40, 10, 500]);
    expect(await ready(monitor)).toBe(false);
    expect(() => monitor.readiness.check()).toThrow(/events lag of this worker's partitions has grown for 61s \(now 50 messages\)/);
    expect(await metrics.registry.metrics()).toContain('worker_consumer_lag_growing_seconds{group="events-writer"} 61');
    await at(62_000, monitor, [5, 10, 500]);
    expect(await ready(monitor)).toBe(true);
  });

  it('keeps readiness for a constant backlog, a growing import, and when the timeout is 0', async () => {
    const constant = setup(10_000);
    for (let t = 0; t <= 60_000; t += 10_000) await at(t, constant.monitor, [50, 50], [t]);
    expect(await ready(constant.monitor)).toBe(true);
    const off = setup(0);
    for (let t = 0; t <= 60_000; t += 10_000) await at(t, off.monitor, [t, t]);
    expect(await ready(off.monitor)).toBe(true);
  });
});
