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
});
