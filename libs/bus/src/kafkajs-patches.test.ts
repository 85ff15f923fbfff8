import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { PartitionMetadata } from 'kafkajs';
import { KeyPartitioner } from './key-partitioner';

const requireFromHere = createRequire(__filename);
const groupPath = requireFromHere.resolve('kafkajs/src/producer/groupMessagesPerPartition.js');
type Group = (args: {
  topic: string;
  partitionMetadata: PartitionMetadata[];
  messages: { key: string; value: string }[];
  partitioner: unknown;
}) => Record<string, { key: string; value: string }[]>;
const groupMessagesPerPartition = requireFromHere(groupPath) as Group;

const kafkajs = (path: string) => requireFromHere(requireFromHere.resolve(`kafkajs/src/${path}`)) as unknown;
type Long = { toString(): string };
const Long = kafkajs('utils/long.js') as { fromValue(value: unknown): Long; fromString(value: string): Long; fromNumber(value: number): Long };
const Decoder = kafkajs('protocol/decoder.js') as new (buffer: Buffer) => unknown;
const { RecordBatch } = kafkajs('protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: object) => Promise<{ buffer: Buffer }> };
const Record = kafkajs('protocol/recordBatch/record/v0/index.js') as (record: object) => unknown;
interface DecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[]>;
}
const decodeRecordBatch = kafkajs('protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: DecodedRecord[] }>;
const Batch = kafkajs('consumer/batch.js') as new (
  topic: string,
  fetchedOffset: string,
  partitionData: { partition: number; highWatermark: string; messages: { offset: string }[]; abortedTransactions: [] },
) => { messages: { offset: string }[] };

/** A record batch as a broker sends it, written by kafkajs's own encoder, then read by its decoder. */
async function roundTrip(
  firstOffset: bigint,
  firstTimestamp: bigint,
  records: { offsetDelta: number; timestampDelta: bigint; headers?: Record<string, string | string[]> }[],
): Promise<DecodedRecord[]> {
  const encoded = await RecordBatch({
    firstOffset: Long.fromValue(firstOffset),
    firstTimestamp: Long.fromValue(firstTimestamp),
    maxTimestamp: Long.fromValue(firstTimestamp),
    lastOffsetDelta: records.length - 1,
    records: records.map(({ offsetDelta, timestampDelta, headers }) =>
      Record({
        offsetDelta,
        timestampDelta: Long.fromValue(timestampDelta),
        key: Buffer.from(`k${offsetDelta}`),
        value: Buffer.from(`v${offsetDelta}`),
        headers,
      }),
    ),
  });
  return (await decodeRecordBatch(new Decoder(encoded.buffer))).records;
}

/** Calls to Long's parsers while `work` runs. */
async function longsParsed(work: () => Promise<unknown> | unknown): Promise<number> {
  const saved = { fromValue: Long.fromValue, fromString: Long.fromString, fromNumber: Long.fromNumber };
  let calls = 0;
  for (const name of ['fromValue', 'fromString', 'fromNumber'] as const) {
    const original = saved[name] as (value: never) => Long;
    Long[name] = function (this: unknown, value: never) {
      calls++;
      return original.call(this, value);
    };
  }
  try {
    await work();
  } finally {
    Object.assign(Long, saved);
  }
  return calls;
}

const partitions = (count: number): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] }));

// patches/kafkajs+2.2.4.patch, applied by npm's postinstall (patch-package).
describe('kafkajs as patched', () => {
  it("groups a produce request's messages in one pass, not by copying each partition's list per message", () => {
    const source = readFileSync(groupPath, 'utf8');
    expect(source).not.toContain('[...current, message]');
    expect(source).toContain('current.push(message)');
  });

  it('encodes each record from its named fields, not a spread of the message (a slow path in V8)', () => {
    const source = readFileSync(requireFromHere.resolve('kafkajs/src/protocol/requests/produce/v3/request.js'), 'utf8');
    expect(source).not.toContain('...message,');
    expect(source).toContain('headers: message.headers,');
  });

  it('keeps every message, in request order within each partition', () => {
    const messages = Array.from({ length: 5000 }, (_, i) => ({ key: `phc_x:user-${i % 37}`, value: String(i) }));
    const partitioner = KeyPartitioner();
    const grouped = groupMessagesPerPartition({ topic: 't', partitionMetadata: partitions(4), messages, partitioner });
    expect(Object.keys(grouped).sort()).toEqual(['0', '1', '2', '3']);
    const seen: string[] = [];
    for (const [partition, list] of Object.entries(grouped)) {
      const order = list.map((m) => Number(m.value));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      for (const m of list) {
        expect(partitioner({ topic: 't', partitionMetadata: partitions(4), message: m })).toBe(Number(partition));
        seen.push(m.value);
      }
    }
    expect(seen.sort()).toEqual(messages.map((m) => m.value).sort());
    expect(groupMessagesPerPartition({ topic: 't', partitionMetadata: [], messages, partitioner })).toEqual({});
  });

  it("reads each record's offset and timestamp as numbers, without a Long per record", async () => {
    const records = Array.from({ length: 1000 }, (_, i) => ({ offsetDelta: i, timestampDelta: BigInt(i * 3) }));
    const batch = await RecordBatch({
      firstOffset: Long.fromValue(5_000_000n),
      firstTimestamp: Long.fromValue(1_795_000_000_000n),
      records: records.map((r) => Record({ ...r, timestampDelta: Long.fromValue(r.timestampDelta), key: null, value: Buffer.from('x') })),
    });
    let decoded: DecodedRecord[] = [];
    // A few per batch (its header's int64 fields), none per record.
    expect(await longsParsed(async () => (decoded = (await decodeRecordBatch(new Decoder(batch.buffer))).records))).toBeLessThan(20);
    expect(decoded.map((r) => [r.offset, r.timestamp])).toEqual(
      records.map((r) => [String(5_000_000 + r.offsetDelta), String(1_795_000_000_000n + r.timestampDelta)]),
    );
  });

  it('keeps offsets below the fetched one out of a batch, without a Long per message', async () => {
    const messages = Array.from({ length: 1000 }, (_, i) => ({ offset: String(9_000 + i) }));
    let kept: { offset: string }[] = [];
    const parsed = await longsParsed(
      () => (kept = new Batch('t', '9500', { partition: 0, highWatermark: '10000', messages, abortedTransactions: [] }).messages),
    );
    expect(parsed).toBeLessThan(5);
    expect(kept.map((m) => m.offset)).toEqual(messages.slice(500).map((m) => m.offset));
    // Offsets past 2^53 are still compared exactly (as Longs).
    const big = ['9007199254740991', '9007199254740992', '9007199254740993', '9007199254740994'].map((offset) => ({ offset }));
    expect(
      new Batch('t', '9007199254740993', { partition: 0, highWatermark: '0', messages: big, abortedTransactions: [] }).messages.map((m) => m.offset),
    ).toEqual(['9007199254740993', '9007199254740994']);
  });

  it('decodes offsets, timestamps and headers as kafkajs did: past 2^53, negative and 8-byte deltas, repeated header keys', async () => {
    const edge = 2n ** 53n - 3n;
    const decoded = await roundTrip(edge, 1_795_000_000_000n, [
      { offsetDelta: 0, timestampDelta: 0n },
      { offsetDelta: 1, timestampDelta: -5n },
      { offsetDelta: 2, timestampDelta: 2n ** 50n, headers: { a: '1' } },
      { offsetDelta: 3, timestampDelta: -(2n ** 55n), headers: { a: ['1', '2'], b: 'x' } },
      { offsetDelta: 9, timestampDelta: 64n },
    ]);
    expect(decoded.map((r) => r.offset)).toEqual([edge, edge + 1n, edge + 2n, edge + 3n, edge + 9n].map(String));
    expect(decoded.map((r) => r.timestamp)).toEqual([0n, -5n, 2n ** 50n, -(2n ** 55n), 64n].map((d) => String(1_795_000_000_000n + d)));
    expect(decoded.map((r) => [r.key?.toString(), r.value?.toString()])).toEqual([0, 1, 2, 3, 9].map((i) => [`k${i}`, `v${i}`]));
    const text = (h: DecodedRecord['headers']) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]));
    expect(decoded.map((r) => text(r.headers))).toEqual([{}, {}, { a: '1' }, { a: ['1', '2'], b: 'x' }, {}]);
    // A batch that starts before 2^53 and a first timestamp that is not a safe integer.
    const negative = await roundTrip(0n, -(2n ** 60n), [{ offsetDelta: 0, timestampDelta: 7n }]);
    expect(negative.map((r) => [r.offset, r.timestamp])).toEqual([['0', String(-(2n ** 60n) + 7n)]]);
  });
});
