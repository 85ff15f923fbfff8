import type { Admin, Consumer, IHeaders, Kafka } from 'kafkajs';
import type { Logger } from '@sightline/logger';
import { backoffMs, sleep, type PartitionLag, type SubscribeOptions, type Subscription } from './event-bus';

/**
 * Coordinator answers that mean "the group is rebalancing: rejoin" (kafkajs's own list, plus an
 * expired membership). kafkajs rejoins when its fetch loop sees one of these as the error's
 * `type`, but an explicit commitOffsets wraps it in a KafkaJSNonRetriableError (the protocol
 * error as its cause), which crashes the consumer for good instead.
 */
const REJOIN_ERRORS = new Set(['REBALANCE_IN_PROGRESS', 'NOT_COORDINATOR_FOR_GROUP', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID']);

/** The protocol error asking this member to rejoin, found in `error` or its causes. */
export function rejoinErrorOf(error: unknown): Error | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (REJOIN_ERRORS.has((e as { type?: unknown }).type as string)) return e;
  }
  return undefined;
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
 * How long `stop()` waits for kafkajs to leave the group once no chunk is in hand. kafkajs's
 * `stop()` can wait forever for a consumer stopped just after it joined, before its fetch loop
 * ran (seen: a worker stopped right after another joined sat out its whole shutdown deadline,
 * exit 1). Past this the member is left to the group's session timeout, as a crash is: nothing it
 * committed is lost and nothing uncommitted is skipped.
 */
const LEAVE_GROUP_WAIT_MS = 3_000;

/** A kafkajs client for one subscription's consumer, with the request timeout it needs. */
export type ConsumerClientFactory = (settings: { requestTimeoutMs: number }) => Kafka;

/**
 * How long a consumer's request may wait for its answer. A broker holds a SyncGroup until the
 * group's leader has sent the assignment, and a JoinGroup until the members have joined: up to
 * the rebalance timeout while a dead leader's session runs out. Shorter (the producer's few
 * seconds), and kafkajs sends the SyncGroup again while the first one is still held, which
 * librdkafka's mock broker cannot take: it aborts (`rd_kafka_mock_cgrp_member_sync_set`,
 * assertion `!member->resp`; seen once in the cluster fault test, with the killed worker leading
 * the group). Kafka's own consumer waits 30 s (request.timeout.ms).
 */
export function consumerRequestTimeoutMs(rebalanceTimeoutMs: number): number {
  return Math.max(30_000, rebalanceTimeoutMs + 5_000);
}

/**
 * A consumer group member running `handler` on chunks of at most `maxBatchSize` messages per
 * partition, `concurrency` partitions at a time. A chunk is committed only after the handler
 * made it durable; a failing handler is retried with backoff, never skipped, until the member
 * stops or loses the partition (then the next owner gets the uncommitted messages again).
 * A consumer that kafkajs gives up on (a crash it will not restart) is replaced by a new one
 * after a backoff: a worker process must not stay up consuming nothing.
 */
export async function subscribeKafkaConsumer(
  kafkaClient: ConsumerClientFactory,
  { groupId, topic, handler, maxBatchSize = 10_000, concurrency = 4, sessionTimeoutMs = 30_000 }: SubscribeOptions,
  logger: Logger,
  admin: () => Promise<Admin>,
): Promise<Subscription> {
  // A rejoining group waits at most this long for members (kafkajs defaults to 60 s).
  const rebalanceTimeoutMs = Math.max(sessionTimeoutMs, 10_000);
  const kafka = kafkaClient({ requestTimeoutMs: consumerRequestTimeoutMs(rebalanceTimeoutMs) });
  let running = true;
  let lastProgress = Date.now();
  let current: Consumer | undefined;
  let crashes = 0;
  // Chunks between their handler's start and their commit, and who waits for none to be.
  let chunksInHand = 0;
  const onNoChunkInHand: (() => void)[] = [];
  const noChunkInHand = () => (chunksInHand === 0 ? Promise.resolve() : new Promise<void>((resolve) => onNoChunkInHand.push(resolve)));
  // The partitions the group gave this member at its last join (rebalances join again).
  let owned = new Set<number>();

  const start = async (): Promise<void> => {
    const consumer = kafka.consumer({
      groupId,
      allowAutoTopicCreation: true,
      sessionTimeout: sessionTimeoutMs,
      rebalanceTimeout: rebalanceTimeoutMs,
      heartbeatInterval: Math.min(3000, Math.floor(sessionTimeoutMs / 3)),
      // Big fetches so the worker writes ClickHouse batches of thousands of rows (the
      // kafkajs default of 1 MB per partition gives ~1,500 events per batch).
      maxBytesPerPartition: 8 << 20,
      maxBytes: 32 << 20,
      maxWaitTimeInMs: 500,
    });
    current = consumer;
    // The fetch loop heartbeats while it is alive, even with nothing to consume.
    consumer.on(consumer.events.HEARTBEAT, () => {
      lastProgress = Date.now();
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      owned = new Set(payload.memberAssignment[topic] ?? []);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, groupId, topic, restart: payload.restart }, 'kafka consumer crashed');
      if (payload.restart || !running || current !== consumer) return;
      // kafkajs stopped this consumer for good: a fresh one rejoins the group.
      const delay = backoffMs(crashes++);
      setTimeout(() => {
        if (running && current === consumer) void start().catch((err: unknown) => logger.error({ err, groupId, topic }, 'kafka consumer restart failed'));
      }, delay);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommit: false,
      partitionsConsumedConcurrently: concurrency,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let from = 0; from < batch.messages.length; from += maxBatchSize) {
          // Stopping or rebalanced away: what is not committed is redelivered to the next owner.
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(from, from + maxBatchSize);
          const messages = chunk.map((m) => ({
            key: m.key ? m.key.toString() : null,
            value: m.value ?? Buffer.alloc(0),
            headers: headersToStrings(m.headers),
            offset: m.offset,
          }));
          chunksInHand++;
          try {
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
            try {
              await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
            } catch (error) {
              // A member left or joined (a crashed worker's session expired): the commit is refused
              // until this member rejoins. The chunk is written but not committed, so its partition's
              // next owner gets it again (written twice, it collapses: same uuids, same dedup token).
              // Thrown as the protocol error, kafkajs rejoins the group and goes on consuming.
              const rejoin = rejoinErrorOf(error);
              if (!rejoin) throw error;
              logger.info({ topic: batch.topic, partition: batch.partition, reason: rejoin.message }, 'commit refused while the group rebalances; rejoining');
              throw rejoin;
            }
          } finally {
            if (--chunksInHand === 0) for (const resolve of onNoChunkInHand.splice(0)) resolve();
          }
          await heartbeat();
          lastProgress = Date.now();
          crashes = 0;
        }
      },
    });
  };

  await start();
  return {
    async stop() {
      if (!running) return;
      running = false;
      const consumer = current;
      if (!consumer) return;
      const left = (async () => {
        await consumer.stop();
        await consumer.disconnect();
        return true;
      })();
      // The chunks in hand are written and committed first, whatever kafkajs does meanwhile.
      const gaveUp = noChunkInHand().then(() => sleep(LEAVE_GROUP_WAIT_MS).then(() => false));
      if (!(await Promise.race([left, gaveUp]))) {
        left.catch(() => undefined);
        logger.warn(
          { groupId, topic, waitedMs: LEAVE_GROUP_WAIT_MS },
          'kafka consumer did not leave its group in time; the group drops it when its session times out',
        );
      }
    },
    idleMs: () => Date.now() - lastProgress,
    lag: async () => groupLag(await admin(), groupId, topic, running ? owned : new Set()),
  };
}

/**
 * The group's lag per partition of `topic`: the high watermark less the group's committed
 * offset (a partition the group never committed on is read from its beginning: its low
 * watermark). Read from the brokers, so a member whose handler is stuck still sees its lag grow.
 */
async function groupLag(admin: Admin, groupId: string, topic: string, owned: ReadonlySet<number>): Promise<PartitionLag[]> {
  const [watermarks, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
  const committedOf = new Map((committed?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  return watermarks
    .map(({ partition, high, low }) => {
      const at = committedOf.get(partition) ?? -1n;
      const from = at < 0n ? BigInt(low) : at;
      const lag = BigInt(high) - from;
      return { partition, lag: Number(lag > 0n ? lag : 0n), owned: owned.has(partition) };
    })
    .sort((a, b) => a.partition - b.partition);
}
