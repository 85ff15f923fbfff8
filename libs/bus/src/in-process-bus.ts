import type { Logger } from '@sightline/logger';
import { backoffMs, sleep, type BusMessage, type ConsumedMessage, type EventBus, type Subscription, type SubscribeOptions } from './event-bus';

/** One send: it resolves once its last message is handled (one promise per send, not per message). */
interface Send {
  unhandled: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Pending {
  message: ConsumedMessage;
  send: Send;
}

interface PartitionState {
  queue: Pending[];
  sequence: number;
  wake?: () => void;
}

interface TopicState {
  partitions: PartitionState[];
  subscribed: boolean;
}

export interface InProcessBusOptions {
  /**
   * Partitions per topic (default 1). A message goes to the partition of its key, so each
   * key keeps its order; with more than one, a consumer of `concurrency` > 1 handles batches
   * of different partitions at once (one writing to ClickHouse while the next is in PostgreSQL).
   */
  partitions?: number;
}

/**
 * A message as its consumer gets it. Nothing crosses a process here, so `value` becomes a
 * Buffer only if read: a consumer that takes `decoded` never reads it (a dead letter does).
 */
class InProcessMessage implements ConsumedMessage {
  readonly key: string;
  readonly headers: Record<string, string>;
  readonly decoded: unknown;
  private encoded: Buffer | undefined;

  constructor(
    private readonly sent: BusMessage,
    readonly offset: string,
  ) {
    this.key = sent.key;
    this.headers = sent.headers ?? {};
    this.decoded = sent.decoded;
  }

  get value(): Buffer {
    if (this.encoded === undefined) {
      const value = this.sent.value;
      this.encoded = Buffer.isBuffer(value) ? value : Buffer.from(value);
    }
    return this.encoded;
  }
}

/** The partition of a key: FNV-1a of its UTF-16 code units (stable, cheap, no allocation). */
export function inProcessPartitionOf(key: string, partitions: number): number {
  if (partitions <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % partitions;
}

/**
 * The embedded bus: one process, one consumer per topic. `send` resolves only after the
 * consumer's handler has durably processed the message, so "200" means "written" here too.
 * Concurrent sends are drained together, which gives the writer large batches.
 */
export function createInProcessBus(logger: Logger, options: InProcessBusOptions = {}): EventBus {
  const partitionCount = Math.max(1, Math.floor(options.partitions ?? 1));
  const topics = new Map<string, TopicState>();
  let closed = false;
  const state = (topic: string): TopicState => {
    let s = topics.get(topic);
    if (!s) {
      s = { partitions: Array.from({ length: partitionCount }, () => ({ queue: [], sequence: 0 })), subscribed: false };
      topics.set(topic, s);
    }
    return s;
  };

  return {
    send(topic, messages) {
      if (closed) return Promise.reject(new Error('bus closed'));
      if (messages.length === 0) return Promise.resolve();
      const s = state(topic);
      const done = new Promise<void>((resolve, reject) => {
        const send: Send = { unhandled: messages.length, resolve, reject };
        for (const m of messages) {
          const p = s.partitions[inProcessPartitionOf(m.key, partitionCount)]!;
          p.queue.push({ message: new InProcessMessage(m, String(p.sequence++)), send });
        }
      });
      for (const p of s.partitions) p.wake?.();
      return done;
    },

    async subscribe({ topic, handler, maxBatchSize = 10_000, concurrency = 1 }: SubscribeOptions) {
      const s = state(topic);
      if (s.subscribed) throw new Error(`in-process bus: topic ${topic} already has a consumer`);
      s.subscribed = true;
      let running = true;
      let lastProgress = Date.now();
      // At most `concurrency` partitions in the handler at once, as the Kafka consumer does.
      let slots = Math.max(1, concurrency);
      const slotWaiters: (() => void)[] = [];
      const takeSlot = async () => {
        while (slots === 0) await new Promise<void>((resolve) => slotWaiters.push(resolve));
        slots--;
      };
      const releaseSlot = () => {
        slots++;
        slotWaiters.shift()?.();
      };
      const consume = async (partition: number, p: PartitionState) => {
        while (running) {
          if (p.queue.length === 0) {
            await new Promise<void>((resolve) => (p.wake = resolve));
            p.wake = undefined;
            continue;
          }
          await takeSlot();
          if (!running) return releaseSlot();
          const taken = p.queue.slice(0, maxBatchSize);
          try {
            for (let attempt = 0; ; attempt++) {
              try {
                await handler({ topic, partition, messages: taken.map((m) => m.message) });
                break;
              } catch (error) {
                // A dependency outage: keep the messages (their senders are still waiting) and retry.
                logger.warn({ err: error, topic, partition, attempt }, 'in-process consumer batch failed; retrying');
                if (!running) return;
                await sleep(backoffMs(attempt));
              }
            }
          } finally {
            releaseSlot();
          }
          p.queue.splice(0, taken.length);
          lastProgress = Date.now();
          for (const m of taken) if (--m.send.unhandled === 0) m.send.resolve();
        }
      };
      const loops = s.partitions.map((p, partition) => consume(partition, p));
      const subscription: Subscription = {
        async stop() {
          running = false;
          for (const p of s.partitions) p.wake?.();
          await Promise.all(loops);
          s.subscribed = false;
        },
        idleMs: () => (s.partitions.every((p) => p.queue.length === 0) ? 0 : Date.now() - lastProgress),
        // Messages sent and not yet handled (the batch in the handler included); one member owns all.
        lag: async () => s.partitions.map((p, partition) => ({ partition, lag: p.queue.length, owned: true })),
      };
      return subscription;
    },

    async ping() {
      if (closed) throw new Error('bus closed');
    },

    async close() {
      closed = true;
      for (const s of topics.values()) {
        for (const p of s.partitions) {
          for (const m of p.queue.splice(0)) m.send.reject(new Error('bus closed before the message was processed'));
          p.wake?.();
        }
      }
    },
  };
}
