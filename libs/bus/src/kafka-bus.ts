import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { ingestEnv, kafkaEnv } from '@sightline/config';
import { withDeadline } from '@sightline/deadline';
import type { Logger } from '@sightline/logger';
import type { EventBus, Subscription } from './event-bus';
import { KeyPartitioner } from './key-partitioner';
import { subscribeKafkaConsumer, type ConsumerClientFactory } from './kafka-consumer';
import { createProduceQueue } from './produce-queue';

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
  const client = (requestTimeout: number) =>
    new Kafka({
      clientId: config.clientId,
      brokers: config.brokers,
      connectionTimeout: 3000,
      requestTimeout,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
      logLevel: logLevel.NOTHING,
    });
  // The producer's (and the lag admin's) requests fail within the send bound; each consumer
  // gets a client of its own whose requests outlast the group's rebalance (kafka-consumer.ts).
  const kafka = client(Math.min(sendTimeoutMs, 30_000));
  const consumerClient: ConsumerClientFactory = ({ requestTimeoutMs }) => client(requestTimeoutMs);
  const producer: Producer = kafka.producer({
    // The default partitioner's choices, at a tenth of its cost per message (key-partitioner.ts).
    createPartitioner: KeyPartitioner,
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
  const subscriptions: Subscription[] = [];
  // One admin client for the lag of every subscription, connected on first use.
  let admin: Promise<Admin> | undefined;
  const adminClient = () => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };

  const queue = createProduceQueue({
    maxRequestBytes,
    lingerMs,
    sendTimeoutMs,
    produce: async (topicMessages) => {
      await connected();
      await producer.sendBatch({ acks: -1, timeout: sendTimeoutMs, topicMessages });
    },
    onProduceFailed: (error, messages) => logger.warn({ err: error, messages }, 'kafka produce failed'),
  });

  return {
    readsValues: true,
    send: (topic, messages) => queue.send(topic, messages),

    async subscribe(options) {
      const subscription = await subscribeKafkaConsumer(consumerClient, options, logger, adminClient);
      subscriptions.push(subscription);
      return subscription;
    },

    async ping() {
      await withDeadline(connected(), sendTimeoutMs, () => new Error(`kafka connect timed out after ${sendTimeoutMs} ms`));
    },

    async close() {
      await Promise.allSettled([...subscriptions.map((s) => s.stop()), admin?.then((a) => a.disconnect())]);
      // Flush what callers are still waiting for; a late success only duplicates (collapsed by uuid).
      await queue.close();
      await producer.disconnect();
    },
  };
}
