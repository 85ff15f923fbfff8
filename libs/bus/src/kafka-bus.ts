import { Kafka, logLevel, Partitioners, type Consumer, type Producer, type IHeaders } from 'kafkajs';
import type { Logger } from '@sightline/logger';
import { backoffMs, sleep, type EventBus, type SubscribeOptions, type Subscription } from './event-bus';

export interface KafkaBusConfig {
  brokers: string[];
  clientId: string;
  /** Needs the cluster controller (real Kafka); librdkafka's mock broker cannot do it. */
  idempotent?: boolean;
  /** Upper bound for one send, retries included, before the caller sees an error. */
  sendTimeoutMs?: number;
}

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
  const sendTimeoutMs = config.sendTimeoutMs ?? 5000;
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
  const inflight = new Set<Promise<unknown>>();

  const withTimeout = <T>(p: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout;
    return Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`kafka ${what} timed out after ${sendTimeoutMs} ms`)), sendTimeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  };

  return {
    async send(topic, messages) {
      if (messages.length === 0) return;
      const sending = connected().then(() =>
        producer.send({
          topic,
          acks: -1,
          timeout: sendTimeoutMs,
          messages: messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
        }),
      );
      // A send that outlives its caller's timeout keeps retrying inside kafkajs; close()
      // waits for it (a late success only duplicates events, which collapse by uuid).
      inflight.add(sending);
      void sending.catch(() => undefined).finally(() => inflight.delete(sending));
      await withTimeout(sending, 'send');
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
      await Promise.allSettled(inflight);
      await producer.disconnect();
    },
  };
}
