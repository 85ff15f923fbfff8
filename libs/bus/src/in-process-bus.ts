import type { Logger } from '@sightline/logger';
import { backoffMs, sleep, type BusMessage, type ConsumedMessage, type EventBus, type Subscription, type SubscribeOptions } from './event-bus';

interface Pending {
  message: ConsumedMessage;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface TopicState {
  queue: Pending[];
  sequence: number;
  wake?: () => void;
  subscribed: boolean;
}

/**
 * The embedded bus: one process, one consumer per topic. `send` resolves only after the
 * consumer's handler has durably processed the message, so "200" means "written" here too.
 * Concurrent sends are drained together, which gives the writer large batches.
 */
export function createInProcessBus(logger: Logger): EventBus {
  const topics = new Map<string, TopicState>();
  let closed = false;
  const state = (topic: string): TopicState => {
    let s = topics.get(topic);
    if (!s) {
      s = { queue: [], sequence: 0, subscribed: false };
      topics.set(topic, s);
    }
    return s;
  };

  return {
    send(topic, messages) {
      if (closed) return Promise.reject(new Error('bus closed'));
      if (messages.length === 0) return Promise.resolve();
      const s = state(topic);
      const done = messages.map(
        (m: BusMessage) =>
          new Promise<void>((resolve, reject) => {
            s.queue.push({
              message: { key: m.key, value: Buffer.isBuffer(m.value) ? m.value : Buffer.from(m.value), headers: m.headers ?? {}, offset: String(s.sequence++) },
              resolve,
              reject,
            });
          }),
      );
      s.wake?.();
      return Promise.all(done).then(() => undefined);
    },

    async subscribe({ topic, handler, maxBatchSize = 10_000 }: SubscribeOptions) {
      const s = state(topic);
      if (s.subscribed) throw new Error(`in-process bus: topic ${topic} already has a consumer`);
      s.subscribed = true;
      let running = true;
      let lastProgress = Date.now();
      const loop = (async () => {
        while (running) {
          if (s.queue.length === 0) {
            await new Promise<void>((resolve) => (s.wake = resolve));
            s.wake = undefined;
            continue;
          }
          const taken = s.queue.slice(0, maxBatchSize);
          for (let attempt = 0; ; attempt++) {
            try {
              await handler({ topic, partition: 0, messages: taken.map((p) => p.message) });
              break;
            } catch (error) {
              // A dependency outage: keep the messages (their senders are still waiting) and retry.
              logger.warn({ err: error, topic, attempt }, 'in-process consumer batch failed; retrying');
              if (!running) return;
              await sleep(backoffMs(attempt));
            }
          }
          s.queue.splice(0, taken.length);
          lastProgress = Date.now();
          for (const p of taken) p.resolve();
        }
      })();
      const subscription: Subscription = {
        async stop() {
          running = false;
          s.wake?.();
          await loop;
          s.subscribed = false;
        },
        idleMs: () => (s.queue.length === 0 ? 0 : Date.now() - lastProgress),
      };
      return subscription;
    },

    async ping() {
      if (closed) throw new Error('bus closed');
    },

    async close() {
      closed = true;
      for (const s of topics.values()) {
        for (const p of s.queue.splice(0)) p.reject(new Error('bus closed before the message was processed'));
        s.wake?.();
      }
    },
  };
}
