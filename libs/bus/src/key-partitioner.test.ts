import { randomBytes } from 'node:crypto';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { KeyPartitioner } from './key-partitioner';

const partitions = (count: number, leaderless: number[] = []): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: leaderless.includes(partitionId) ? -1 : 0,
    replicas: [0],
    isr: [0],
  }));

describe('KeyPartitioner', () => {
  const kafkajs = Partitioners.DefaultPartitioner();
  const ours = KeyPartitioner();

  it("puts every key on the partition kafkajs's default (Java-compatible) partitioner chooses", () => {
    const keys: (string | Buffer)[] = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'phc_bench_token_0001:user-1',
      'phc_token:ünïcödé-ユーザー-😀',
      'x'.repeat(201),
      ...Array.from({ length: 2000 }, (_, i) => `phc_${i}:${randomBytes(1 + (i % 40)).toString('base64')}`),
      ...Array.from({ length: 500 }, (_, i) => randomBytes(i % 67)),
    ];
    for (const count of [1, 3, 4, 16, 64, 100]) {
      const metadata = partitions(count);
      for (const key of keys) {
        const args = { topic: 't', partitionMetadata: metadata, message: { key, value: 'v' } };
        expect([String(key), count, ours(args)]).toEqual([String(key), count, kafkajs(args)]);
      }
    }
  });

  it('hashes over all partitions, leaderless ones included, as the Java client does for keyed messages', () => {
    const metadata = partitions(8, [0, 1, 2, 3, 4, 5, 6]);
    for (let i = 0; i < 200; i++) {
      const args = { topic: 't', partitionMetadata: metadata, message: { key: `k${i}`, value: 'v' } };
      expect(ours(args)).toBe(kafkajs(args));
    }
  });

  it('keeps an explicit partition, and spreads keyless messages over partitions with a leader', () => {
    const metadata = partitions(4, [1]);
    expect(ours({ topic: 't', partitionMetadata: metadata, message: { key: 'k', value: 'v', partition: 3 } })).toBe(3);
    const chosen = new Set(Array.from({ length: 40 }, () => ours({ topic: 't', partitionMetadata: metadata, message: { key: null, value: 'v' } })));
    expect([...chosen].sort()).toEqual([0, 2, 3]);
  });
});
