import { Kafka, logLevel, Partitioners, type Consumer, type Producer, type IHeaders } from 'kafkajs';
import type { Logger } from '@sightline/logger';
import { backoffMs, sleep, type BusMessage, type EventBus, type SubscribeOptions, type Subscription } from './event-bus';
import { ingestEnv, kafkaEnv } from '@sightline/config';
import { withDeadline } from '@sightline/deadline';

export interface KafkaBusConfig {
  brokers: string[];
  clientId: string;
  /** Needs the cluster controller (real Kafka); librdkafka's mock broker cannot do it. */
  idempotent?: boolean;
  /** Upper bound for one send, retries included, before the caller sees an error. */
  sendTimeoutMs?: number;
  /**
   * How long the producer waits to gather messages of concurrent sends into one produce
   * request when it is idle (while a request is in flight, messages gather anyway).
   */
  lingerMs?: number;
  /** Largest produce request (sum of value sizes); a bigger send is split, in order. */
  maxRequestBytes?: number;
}

/** One caller's send waiting in the producer queue. */
interface QueuedSend {
  topic: string;
  messages: readonly BusMessage[];
  /** Index of the next message of this send to hand to the producer. */
  taken: number;
  /** The caller gave up (timeout) before any of its messages was handed over: never sent. */
  cancelled: boolean;
  failed: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

const messageBytes = (m: BusMessage) => (typeof m.value === 'string' ? m.value.length : m.value.byteLength) + m.key.length;

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  }
  return out;
}

/**
 * Kafka through kafkajs. The producer fails fast (short timeouts, few retries) so the
 * gateway can answer 503 instead of hanging; acks=-1 and one request in flight keep
 * every acknowledged message durable and in key order.
 */
export function createKafkaBus(config: KafkaBusConfig, logger: Logger): EventBus {
  // The settings' own defaults (libs/config), for callers such as tests that leave them out.
  const sendTimeoutMs = config.sendTimeoutMs ?? kafkaEnv.BUS_SEND_TIMEOUT_MS.default;
  const lingerMs = config.lingerMs ?? ingestEnv.BUS_PRODUCER_LINGER_MS.default;
  const maxRequestBytes = config.maxRequestBytes ?? kafkaEnv.KAFKA_PRODUCE_REQUEST_MAX_BYTES.default;
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: config.brokers,
    connectionTimeout: 3000,
    requestTimeout: Math.min(sendTimeoutMs, 30_000),
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.NOTHING,
  });
  const producer: Producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: true,
    idempotent: config.idempotent ?? false,
    maxInFlightRequests: config.idempotent ? 5 : 1,
  });
  let connecting: Promise<void> | undefined;
  const connected = () => {
    connecting ??= producer.connect().catch((error: unknown) => {
      connecting = undefined;
      throw error;
    });
    return connecting;
  };
  producer.on(producer.events.DISCONNECT, () => {
    connecting = undefined;
  });
  const consumers: Consumer[] = [];

  // Producer batching: sends of concurrent callers queue here and go out together, one
  // produce request at a time (acks=-1, so order per key holds across requests).
  const queue: QueuedSend[] = [];
  let flushing: Promise<void> | undefined;
  let lingerTimer: NodeJS.Timeout | undefined;
  let closing = false;

  /** Takes up to maxRequestBytes of queued messages (at least one), in queue order. */
  const takeRequest = () => {
    const parts: { entry: QueuedSend; from: number; to: number }[] = [];
    let bytes = 0;
    while (queue.length > 0) {
      const entry = queue[0]!;
      if (entry.cancelled || entry.failed) {
        queue.shift();
        continue;
      }
      const from = entry.taken;
      let to = from;
      while (to < entry.messages.length && (bytes === 0 || bytes + messageBytes(entry.messages[to]!) <= maxRequestBytes)) {
        bytes += messageBytes(entry.messages[to]!);
        to++;
      }
      if (to === from) break; // request full
      entry.taken = to;
      parts.push({ entry, from, to });
      if (to < entry.messages.length) break; // the rest of this send goes in the next request
      queue.shift();
    }
    return parts;
  };

  const produce = async (parts: { entry: QueuedSend; from: number; to: number }[]) => {
    const byTopic = new Map<string, { key: string; value: string | Buffer; headers?: Record<string, string> }[]>();
    for (const { entry, from, to } of parts) {
      let list = byTopic.get(entry.topic);
      if (!list) byTopic.set(entry.topic, (list = []));
      for (let i = from; i < to; i++) {
        const m = entry.messages[i]!;
        list.push({ key: m.key, value: m.value, headers: m.headers });
      }
    }
    try {
      await connected();
      await producer.sendBatch({ acks: -1, timeout: sendTimeoutMs, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    } catch (error) {
      for (const { entry } of parts) {
        entry.failed = true;
        entry.reject(error as Error);
      }
      logger.warn({ err: error, messages: parts.reduce((n, p) => n + p.to - p.from, 0) }, 'kafka produce failed');
      return;
    }
    for (const { entry, to } of parts) if (to === entry.messages.length && !entry.failed) entry.resolve();
  };

  const flush = async () => {
    for (;;) {
      const parts = takeRequest();
      if (parts.length === 0) return;
      await produce(parts);
    }
  };

  const startFlush = () => {
    lingerTimer = undefined;
    if (flushing) return;
    flushing = flush().finally(() => {
      flushing = undefined;
      if (queue.length > 0) scheduleFlush();
    });
  };

  /** While a request is in flight the queue fills by itself; when idle, linger briefly. */
  function scheduleFlush() {
    if (flushing || lingerTimer) return;
    if (closing || lingerMs <= 0) startFlush();
    else lingerTimer = setTimeout(startFlush, lingerMs);
  }

  const withTimeout = <T>(p: Promise<T>, what: string): Promise<T> =>
    withDeadline(p, sendTimeoutMs, () => new Error(`kafka ${what} timed out after ${sendTimeoutMs} ms`));

  return {
    send(topic, messages) {
      if (closing) return Promise.reject(new Error('kafka bus closed'));
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          // What is not handed over yet is dropped, so a request answered 503 is not written later.
          entry.cancelled = true;
          entry.reject(new Error(`kafka send timed out after ${sendTimeoutMs} ms`));
        }, sendTimeoutMs);
        const entry: QueuedSend = {
          topic,
          messages,
          taken: 0,
          cancelled: false,
          failed: false,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        queue.push(entry);
        scheduleFlush();
      });
    },

    async subscribe({ groupId, topic, handler, maxBatchSize = 10_000, concurrency = 4, sessionTimeoutMs = 30_000 }: SubscribeOptions) {
      const consumer = kafka.consumer({
        groupId,
        allowAutoTopicCreation: true,
        sessionTimeout: sessionTimeoutMs,
        // A rejoining group waits at most this long for members (kafkajs defaults to 60 s).
        rebalanceTimeout: Math.max(sessionTimeoutMs, 10_000),
        heartbeatInterval: Math.min(3000, Math.floor(sessionTimeoutMs / 3)),
        // Big fetches so the worker writes ClickHouse batches of thousands of rows (the
        // kafkajs default of 1 MB per partition gives ~1,500 events per batch).
        maxBytesPerPartition: 8 << 20,
        maxBytes: 32 << 20,
        maxWaitTimeInMs: 500,
      });
      consumers.push(consumer);
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      let running = true;
      let lastProgress = Date.now();
      // The fetch loop heartbeats while it is alive, even with nothing to consume.
      consumer.on(consumer.events.HEARTBEAT, () => {
        lastProgress = Date.now();
      });
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: false,
        partitionsConsumedConcurrently: concurrency,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          for (let start = 0; start < batch.messages.length; start += maxBatchSize) {
            // Stopping or rebalanced away: what is not committed is redelivered to the next owner.
            if (!isRunning() || isStale()) return;
            const chunk = batch.messages.slice(start, start + maxBatchSize);
            const messages = chunk.map((m) => ({
              key: m.key ? m.key.toString() : null,
              value: m.value ?? Buffer.alloc(0),
              headers: headersToStrings(m.headers),
              offset: m.offset,
            }));
            for (let attempt = 0; ; attempt++) {
              if (!isRunning() || isStale()) return;
              try {
                await handler({ topic: batch.topic, partition: batch.partition, messages });
                break;
              } catch (error) {
                logger.warn({ err: error, topic: batch.topic, partition: batch.partition, attempt }, 'batch failed; retrying without committing');
                await sleep(backoffMs(attempt));
                await heartbeat().catch(() => undefined);
              }
            }
            // Only after the handler made this chunk and every earlier one durable. autoCommit is
            // off, so the commit is explicit (commitOffsetsIfNecessary would do nothing): next offset to read.
            const last = chunk[chunk.length - 1]!.offset;
            resolveOffset(last);
            await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
            await heartbeat();
            lastProgress = Date.now();
          }
        },
      });
      const subscription: Subscription = {
        async stop() {
          if (!running) return;
          running = false;
          await consumer.stop();
          await consumer.disconnect();
        },
        idleMs: () => Date.now() - lastProgress,
      };
      return subscription;
    },

    async ping() {
      await withTimeout(connected(), 'connect');
    },

    async close() {
      await Promise.allSettled(consumers.map((c) => c.disconnect()));
      // Flush what callers are still waiting for; a late success only duplicates (collapsed by uuid).
      closing = true;
      if (lingerTimer) {
        clearTimeout(lingerTimer);
        startFlush();
      }
      while (flushing) await flushing;
      await producer.disconnect();
    },
  };
}
