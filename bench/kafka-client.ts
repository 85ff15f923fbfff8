/**
 * Kafka client benchmark: kafkajs (the bus's client) against @platformatic/kafka, in the same
 * run, on the same librdkafka mock cluster (kcat, 3 brokers, 4 partitions per topic), with the
 * messages the gateway produces for a /batch/ of 100 events.
 *
 * - produce: BENCH_IN_FLIGHT loops each sending one request's 100 messages (acks=-1) until
 *   BENCH_MESSAGES messages are acknowledged; messages/s and CPU µs per message of this process.
 * - consume: a new consumer group reads BENCH_CONSUME_MESSAGES messages from the beginning of a topic
 *   filled once for both clients, committing after every chunk of at most 1,000 messages of a
 *   partition (as the bus consumer does, before reading on); messages/s and CPU µs/message,
 *   timed from the first message delivered (joining the group is a fixed cost left out).
 * - codec: each client's own request building for those produce requests (serialisation, key
 *   partitioning, record batches, the Produce v7 body) and its own record-batch decoding, in
 *   this process without a broker; CPU µs per message. This part runs for both clients on any
 *   machine, the two end-to-end parts only where the broker speaks the client's protocol
 *   versions: a client the broker refuses is reported with the broker's answer.
 *
 * Prints medians of BENCH_RUNS repetitions (interleaved, so drift in machine load hits both
 * clients alike) and the ratio platformatic / kafkajs (throughput: > 1 is faster; CPU: < 1 is
 * cheaper).
 *
 *   npm run bench:kafka-client      (BENCH_RUNS, BENCH_MESSAGES, BENCH_CONSUME_MESSAGES,
 *                                    BENCH_IN_FLIGHT to tune;
 *                                    BENCH_KAFKA_BROKERS=host:port,… to use a running cluster
 *                                    instead of starting the mock: a real Kafka 3.5 or later
 *                                    takes both clients; @platformatic/kafka's end-to-end
 *                                    part has only been run as far as the mock's refusal)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as platformatic from '@platformatic/kafka';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { median } from './bench-process';
import { producedMessages } from './gateway-messages';
import { ServiceLauncher, startKafkaMock } from '@sightline/local-services';

// kafkajs keeps its protocol encoders outside its public API; the codec part reaches them by path.
const kafkajsProduceV7 = require('kafkajs/src/protocol/requests/produce/v7/request') as (args: {
  acks: number;
  timeout: number;
  topicData: { topic: string; partitions: { partition: number; messages: { key: string; value: string }[] }[] }[];
}) => { encode(): Promise<{ buffer: Buffer }> };
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;
const kafkajsDecodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: unknown) => Promise<{ records: unknown[] }>;

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const MESSAGES = Number(process.env['BENCH_MESSAGES'] ?? 100_000);
/**
 * librdkafka's mock keeps only the last 5 MiB of each partition (older message sets are
 * dropped), so a consumer group reading from the beginning sees at most that: 20,000 of these
 * messages stay under it on the fullest of the 4 partitions.
 */
const CONSUME_MESSAGES = Number(process.env['BENCH_CONSUME_MESSAGES'] ?? 20_000);
const IN_FLIGHT = Number(process.env['BENCH_IN_FLIGHT'] ?? 32);
/** Produce requests encoded per codec measurement; decoding, far cheaper, goes over 5× as many. */
const CODEC_REQUESTS = 2_000;
const DECODE_REQUESTS = 5 * CODEC_REQUESTS;
const PARTITIONS = 4;
const COMMIT_EVERY = 1_000;
const CLIENTS = ['kafkajs', 'platformatic'] as const;
type ClientName = (typeof CLIENTS)[number];

interface Measured {
  messagesPerSec: number;
  cpuUsPerMessage: number;
}

/** Wall time and this process's CPU time (user + system) from now to `stop`, per message. */
function meter(): { stop(messages: number): Measured } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  return {
    stop(messages) {
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      return { messagesPerSec: messages / seconds, cpuUsPerMessage: (used.user + used.system) / messages };
    },
  };
}

async function measure(messages: number, work: () => Promise<void>): Promise<Measured> {
  const m = meter();
  await work();
  return m.stop(messages);
}

// As text (the clients' string serialisers): the same bytes once UTF-8 encoded.
const BATCH = producedMessages('batch100').map((m) => ({ key: m.key, value: m.value.toString('utf8') }));

/**
 * Calls `fail` when a consumer has received no message for a minute (a stuck group), instead
 * of hanging the run; returns the function that ends the watch.
 */
function watchStall(seen: () => number, fail: (error: Error) => void): () => void {
  let last = -1;
  const timer = setInterval(() => {
    if (seen() === last) {
      clearInterval(timer);
      fail(new Error(`consumer stalled after ${last} messages`));
    }
    last = seen();
  }, 60_000);
  return () => clearInterval(timer);
}

/** Runs `loops` concurrent loops of `send` until `requests` sends were started. */
async function inFlight(requests: number, loops: number, send: () => Promise<unknown>): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (started < requests) {
        started++;
        await send();
      }
    }),
  );
}

// ---- kafkajs: the settings of libs/bus (kafka-bus.ts, kafka-consumer.ts) ----

function kafkajsClient(brokers: string[]) {
  return new Kafka({ clientId: 'bench-kafkajs', brokers, connectionTimeout: 3000, retry: { retries: 2 }, logLevel: logLevel.NOTHING });
}

async function kafkajsProduce(brokers: string[], topic: string, messages: number): Promise<Measured> {
  const producer = kafkajsClient(brokers).producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: BATCH }); // connections, metadata, topic creation
    return await measure(messages, () =>
      inFlight(messages / BATCH.length, IN_FLIGHT, () => producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: BATCH }] })),
    );
  } finally {
    await producer.disconnect();
  }
}

async function kafkajsConsume(brokers: string[], topic: string, groupId: string, messages: number): Promise<Measured> {
  const consumer = kafkajsClient(brokers).consumer({ groupId, maxBytesPerPartition: 8 << 20, maxBytes: 32 << 20, maxWaitTimeInMs: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    // Timed from the first message delivered: joining the group is not part of it.
    let timing: ReturnType<typeof meter> | undefined;
    let seen = 0;
    let unwatch: () => void = () => {};
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS,
          eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
            timing ??= meter();
            for (let start = 0; start < batch.messages.length; start += COMMIT_EVERY) {
              const chunk = batch.messages.slice(start, start + COMMIT_EVERY);
              for (const m of chunk) if (m.value) seen++;
              const last = chunk[chunk.length - 1]!.offset;
              resolveOffset(last);
              await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
              await heartbeat();
            }
            if (seen >= messages) resolve();
          },
        })
        .catch(reject);
      unwatch = watchStall(() => seen, reject);
    }).finally(() => unwatch());
    return timing!.stop(seen);
  } finally {
    await consumer.disconnect();
  }
}

// ---- @platformatic/kafka: the same settings where it has them ----

const platformaticBase = (brokers: string[]) => ({
  clientId: 'bench-platformatic',
  bootstrapBrokers: brokers,
  connectTimeout: 3000,
  retries: 2,
  autocreateTopics: true,
});

async function platformaticProduce(brokers: string[], topic: string, messages: number): Promise<Measured> {
  // compatibilityPartitioner is Java's (and kafkajs's) murmur2 mapping; the library's default
  // maps keys to other partitions, which would reorder a key's events across a client switch.
  const producer = new platformatic.Producer({
    ...platformaticBase(brokers),
    serializers: platformatic.stringSerializers,
    partitioner: platformatic.compatibilityPartitioner,
    acks: platformatic.ProduceAcks.ALL,
  });
  const send = () => producer.send({ messages: BATCH.map((m) => ({ topic, key: m.key, value: m.value })) });
  try {
    await send(); // connections, metadata, topic creation
    return await measure(messages, () => inFlight(messages / BATCH.length, IN_FLIGHT, send));
  } finally {
    await producer.close();
  }
}

async function platformaticConsume(brokers: string[], topic: string, groupId: string, messages: number): Promise<Measured> {
  const consumer = new platformatic.Consumer({
    ...platformaticBase(brokers),
    groupId,
    maxBytesPerPartition: 8 << 20,
    maxBytes: 32 << 20,
    maxWaitTime: 500,
    autocommit: false,
  });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest' });
    // Timed from the first message delivered: joining the group is not part of it.
    let timing: ReturnType<typeof meter> | undefined;
    const sinceCommit = new Map<number, number>();
    let seen = 0;
    let stall: Error | undefined;
    const unwatch = watchStall(
      () => seen,
      (error) => {
        stall = error;
        void stream.close();
      },
    );
    for await (const m of stream) {
      timing ??= meter();
      if (m.value) seen++;
      const n = (sinceCommit.get(m.partition) ?? 0) + 1;
      sinceCommit.set(m.partition, n);
      if (n >= COMMIT_EVERY || seen >= messages) {
        await m.commit(); // commits this message's offset + 1
        sinceCommit.set(m.partition, 0);
      }
      if (seen >= messages) break;
    }
    unwatch();
    if (stall) throw stall;
    const result = timing!.stop(seen);
    await stream.close();
    return result;
  } finally {
    await consumer.close(true);
  }
}

// ---- codec: each client's own request building and record-batch decoding, no broker ----

/** The gateway's messages as a record batch (magic v2), one per partition they fall into. */
function recordBatches(): Buffer[] {
  const byPartition = new Map<number, typeof BATCH>();
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    partitionErrorCode: 0,
    replicas: [1],
    isr: [1],
  }));
  for (const m of BATCH) {
    const p = partitioner({ topic: 't', partitionMetadata, message: m });
    byPartition.set(p, [...(byPartition.get(p) ?? []), m]);
  }
  return [...byPartition.values()].map((messages) => {
    const records = messages.map((m) => ({ topic: 't', key: Buffer.from(m.key), value: Buffer.from(m.value), headers: new Map<Buffer, Buffer>() }));
    // The whole batch as a fetch answer carries it, FirstOffset (0) included.
    return platformatic.createRecordsBatch(records).buffer;
  });
}

async function codec(client: ClientName): Promise<{ encode: Measured; decode: Measured }> {
  const topic = 'bench-codec.events';
  const messages = CODEC_REQUESTS * BATCH.length;
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    partitionErrorCode: 0,
    replicas: [1],
    isr: [1],
  }));
  const encode =
    client === 'kafkajs'
      ? await measure(messages, async () => {
          // What kafkajs's sendBatch does per request before the wire: partition, group, encode.
          const partitioner = Partitioners.DefaultPartitioner();
          for (let r = 0; r < CODEC_REQUESTS; r++) {
            const byPartition = new Map<number, { key: string; value: string }[]>();
            for (const m of BATCH) {
              const p = partitioner({ topic, partitionMetadata, message: m });
              let list = byPartition.get(p);
              if (!list) byPartition.set(p, (list = []));
              list.push({ key: m.key, value: m.value });
            }
            const request = kafkajsProduceV7({
              acks: -1,
              timeout: 30_000,
              topicData: [{ topic, partitions: [...byPartition].map(([partition, list]) => ({ partition, messages: list })) }],
            });
            await request.encode();
          }
        })
      : await measure(messages, async () => {
          // What platformatic's send does per request before the wire: serialise, partition, encode.
          for (let r = 0; r < CODEC_REQUESTS; r++) {
            const records = BATCH.map((m) => {
              const key = platformatic.stringSerializers.key(m.key)!;
              return {
                topic,
                key,
                value: platformatic.stringSerializers.value(m.value)!,
                headers: new Map<Buffer, Buffer>(),
                partition: platformatic.compatibilityPartitioner({ topic }, key) % PARTITIONS,
              };
            });
            void platformatic.produceV7.createRequest(-1, 30_000, records).buffer;
          }
        });
  const batches = recordBatches();
  const decoded = DECODE_REQUESTS * BATCH.length;
  const decode =
    client === 'kafkajs'
      ? await measure(decoded, async () => {
          for (let r = 0; r < DECODE_REQUESTS; r++) for (const b of batches) await kafkajsDecodeRecordBatch(new KafkajsDecoder(b));
        })
      : await measure(decoded, async () => {
          for (let r = 0; r < DECODE_REQUESTS; r++) for (const b of batches) platformatic.readRecordsBatch(platformatic.Reader.from(b));
        });
  return { encode, decode };
}

// ---- the run ----

type Part = 'produce' | 'consume' | 'encode (codec)' | 'decode (codec)';
const PARTS: Part[] = ['produce', 'consume', 'encode (codec)', 'decode (codec)'];

/** Why a client could not talk to the broker: the first error with a broker answer, shortened. */
function refusal(error: unknown): string {
  const e = error as { message?: string; errors?: unknown[]; response?: unknown };
  const inner = (e.errors ?? [])[0] as { message?: string; apiId?: string } | undefined;
  return [e.message, inner?.apiId ? `${inner.apiId}: ${inner.message}` : inner?.message].filter(Boolean).join(' / ');
}

async function main() {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-'));
  const launcher = new ServiceLauncher(tempDir);
  try {
    const given = process.env['BENCH_KAFKA_BROKERS'];
    const brokers = given ? given.split(',') : (await startKafkaMock(launcher)).kafkaBrokers;
    const prefix = `bench${Date.now()}`;
    console.log(
      `kafka client bench: ${RUNS} runs, ${MESSAGES} messages produced and ${CONSUME_MESSAGES} consumed, of ${BATCH.length}-message requests (${Math.round(BATCH.reduce((n, m) => n + m.key.length + m.value.length, 0) / BATCH.length)} bytes each), ` +
        `${IN_FLIGHT} in flight, ${given ? `brokers ${given}` : 'librdkafka mock cluster'}, ${os.cpus().length} CPUs, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}, node ${process.version}`,
    );
    // The topic both consumers read: filled once, with kafkajs (the client every broker here takes).
    const consumeTopic = `${prefix}.consume`;
    await kafkajsProduce(brokers, consumeTopic, CONSUME_MESSAGES);

    const results: Record<ClientName, Record<Part, Measured[]>> = {
      kafkajs: { produce: [], consume: [], 'encode (codec)': [], 'decode (codec)': [] },
      platformatic: { produce: [], consume: [], 'encode (codec)': [], 'decode (codec)': [] },
    };
    const refused: Partial<Record<ClientName, string>> = {};
    for (const client of CLIENTS) await codec(client); // warm-up: JIT
    for (let run = 0; run < RUNS; run++) {
      for (const client of CLIENTS) {
        const { encode, decode } = await codec(client);
        results[client]['encode (codec)'].push(encode);
        results[client]['decode (codec)'].push(decode);
        if (refused[client]) continue;
        try {
          const produce = client === 'kafkajs' ? kafkajsProduce : platformaticProduce;
          const consume = client === 'kafkajs' ? kafkajsConsume : platformaticConsume;
          console.error(`run ${run + 1}: ${client} produce`);
          results[client].produce.push(await produce(brokers, `${prefix}.produce-${client}-${run}`, MESSAGES));
          console.error(`run ${run + 1}: ${client} consume`);
          results[client].consume.push(await consume(brokers, consumeTopic, `${prefix}-${client}-${run}`, CONSUME_MESSAGES));
        } catch (error) {
          refused[client] = refusal(error);
        }
      }
    }

    console.log(`\nmedians of ${RUNS} runs (CPU: this process, user + system)\n`);
    const cell = (xs: Measured[], f: (m: Measured) => number) => (xs.length ? median(xs.map(f)) : undefined);
    for (const part of PARTS) {
      const rows = CLIENTS.map((client) => ({
        client,
        rate: cell(results[client][part], (m) => m.messagesPerSec),
        cpu: cell(results[client][part], (m) => m.cpuUsPerMessage),
        runs: results[client][part].map((m) => Math.round(m.messagesPerSec)).join(', '),
      }));
      console.log(part);
      for (const r of rows) {
        console.log(
          r.rate === undefined
            ? `  ${r.client.padEnd(13)} not measured: ${refused[r.client] ?? 'no result'}`
            : `  ${r.client.padEnd(13)} ${Math.round(r.rate).toString().padStart(9)} msg/s  ${r.cpu!.toFixed(2).padStart(6)} µs CPU/msg  (runs: ${r.runs})`,
        );
      }
      const [k, p] = rows;
      if (k!.rate !== undefined && p!.rate !== undefined) {
        console.log(`  platformatic / kafkajs: throughput ${(p!.rate / k!.rate).toFixed(2)}, CPU per message ${(p!.cpu! / k!.cpu!).toFixed(2)}`);
      }
    }
  } finally {
    launcher.started.forEach((s) => s.child.kill('SIGKILL'));
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
