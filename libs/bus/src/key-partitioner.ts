import { Partitioners, type ICustomPartitioner } from 'kafkajs';

// Kafka's murmur2 constants (org.apache.kafka.common.utils.Utils#murmur2).
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * Kafka's murmur2 of a key's bytes (32-bit, as the Java client computes it). kafkajs's own
 * runs the same arithmetic through 64-bit Long objects, several allocations per 4 bytes; this
 * one stays in 32-bit integers (Math.imul). key-partitioner.test checks it against kafkajs's
 * partitioner key by key, so an event lands on the partition any Kafka client would choose.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3;
  if (tail > 0) {
    if (tail === 3) h ^= data[whole + 2]! << 16;
    if (tail >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/**
 * kafkajs's DefaultPartitioner (the Java client's: murmur2 of the key's UTF-8 bytes, made
 * positive, modulo the topic's partition count), with a cheaper hash and without the array of
 * available partitions kafkajs builds for every message: the producer calls it once per message.
 * Keyless messages and explicit partitions go to kafkajs's own partitioner, unchanged.
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const fallback = Partitioners.DefaultPartitioner();
  return (args) => {
    const { message, partitionMetadata } = args;
    const key = message.key;
    if (key === null || key === undefined || (message.partition !== null && message.partition !== undefined)) return fallback(args);
    const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
    return (murmur2(bytes) & 0x7fffffff) % partitionMetadata.length;
  };
};
