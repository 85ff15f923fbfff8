import type { PartitionLag, Subscription } from '@sightline/bus';
import type { HealthCheck } from '@sightline/http';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';

/**
 * Whether a lag keeps growing: a growth window opens at a sample and stays open while every
 * later sample is at least as large; a smaller sample (or none at all) closes it. The lag has
 * been growing for the window's age once it is larger than where the window opened: a constant
 * backlog that a worker keeps pace with is not growing, a worker falling behind is.
 */
export class LagGrowth {
  private window: { atMs: number; lag: number } | null = null;
  private latest = 0;

  observe(lag: number, nowMs: number): void {
    this.latest = lag;
    if (lag === 0 || this.window === null || lag < this.window.lag) this.window = lag === 0 ? null : { atMs: nowMs, lag };
  }

  /** How long the lag has been growing, 0 when it is not. */
  growingForMs(nowMs: number): number {
    if (this.window === null || this.latest <= this.window.lag) return 0;
    return nowMs - this.window.atMs;
  }

  get lag(): number {
    return this.latest;
  }
}

export interface MonitoredSubscription {
  /** The consumer's name (events, events-historical, dead-letters). */
  name: string;
  groupId: string;
  topic: string;
  sub: Subscription;
}

export interface LagMonitorOptions {
  subscriptions: () => readonly MonitoredSubscription[];
  metrics: Metrics;
  logger: Logger;
  /** How often the lag is read from the bus. */
  pollMs: number;
  /** The consumer whose growing lag makes the worker not ready (the live events). */
  readinessConsumer: string;
  /** How long its lag may keep growing before readiness fails (WORKER_LAG_READINESS_TIMEOUT_MS); 0: never. */
  readinessTimeoutMs: number;
  now?: () => number;
}

export interface LagMonitor {
  start(): void;
  stop(): void;
  /** One reading of every subscription's lag (what each poll does). */
  sample(): Promise<void>;
  readiness: HealthCheck;
}

/**
 * Reads every consumer group's lag from the bus, exports it (per partition this worker
 * consumes, per group) and fails readiness while the live events lag of this worker's
 * partitions has kept growing for longer than the timeout: the worker is falling behind.
 */
export function createLagMonitor(options: LagMonitorOptions): LagMonitor {
  const now = options.now ?? Date.now;
  const growth = new Map<string, LagGrowth>();
  /** Partition label sets this process set, per group: removed when the partition moves away. */
  const reported = new Map<string, Set<string>>();
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;

  const record = (s: MonitoredSubscription, partitions: PartitionLag[]) => {
    const owned = partitions.filter((p) => p.owned);
    const previous = reported.get(s.groupId) ?? new Set<string>();
    const current = new Set(owned.map((p) => String(p.partition)));
    for (const partition of previous) if (!current.has(partition)) options.metrics.consumerLag.remove({ group: s.groupId, topic: s.topic, partition });
    for (const p of owned) options.metrics.consumerLag.set({ group: s.groupId, topic: s.topic, partition: String(p.partition) }, p.lag);
    reported.set(s.groupId, current);
    options.metrics.consumerGroupLag.set(
      { group: s.groupId, topic: s.topic },
      partitions.reduce((sum, p) => sum + p.lag, 0),
    );
    const g = growth.get(s.name) ?? new LagGrowth();
    growth.set(s.name, g);
    g.observe(
      owned.reduce((sum, p) => sum + p.lag, 0),
      now(),
    );
    options.metrics.consumerLagGrowingSeconds.set({ group: s.groupId }, g.growingForMs(now()) / 1000);
  };

  const sample = async () => {
    await Promise.all(
      options.subscriptions().map(async (s) => {
        if (!s.sub.lag) return;
        try {
          record(s, await s.sub.lag());
          failures = 0;
        } catch (error) {
          // Readiness covers a bus that is down (ping); a lag that cannot be read is only logged, now and then.
          if (failures++ % 20 === 0) options.logger.warn({ err: error, group: s.groupId }, 'reading the consumer lag failed');
        }
      }),
    );
  };

  return {
    start() {
      timer ??= setInterval(() => void sample(), options.pollMs);
      timer.unref();
      void sample();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    sample,
    readiness: {
      name: 'lag',
      check: () => {
        if (options.readinessTimeoutMs === 0) return;
        const g = growth.get(options.readinessConsumer);
        const ms = g?.growingForMs(now()) ?? 0;
        if (ms > options.readinessTimeoutMs) {
          throw new Error(`the ${options.readinessConsumer} lag of this worker's partitions has grown for ${Math.round(ms / 1000)}s (now ${g!.lag} messages)`);
        }
      },
    },
  };
}
