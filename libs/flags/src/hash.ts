import { hash } from 'node:crypto';

/** 2^60 - 1: the largest value 15 hex digits can hold (PostHog's LONG_SCALE). */
const LONG_SCALE = 0xfffffffffffffff;
const TWO_POW_32 = 4294967296;

/**
 * PostHog's bucketing hash (docs/flags.md#bucketing): SHA-1 of `<prefix><identifier><salt>`, the first
 * 15 hex digits read as an unsigned integer and divided by 2^60-1. The 60-bit integer is
 * built as high·2^32 + low: both parts and the product are exact doubles, so the one
 * rounding left is the addition's, round-to-nearest, exactly as `Number(BigInt(..))`,
 * Rust's `u64 as f64` and Python's int/float (without BigInt's cost on the hot path).
 */
export function bucketHash(prefix: string, identifier: string, salt = ''): number {
  // The digest as 20 one-byte characters ('binary', i.e. latin1): its bytes are read from the character codes,
  // with no hex text made and parsed. The first 15 hex digits are the first 7.5 bytes: 28 bits
  // (bytes 0-2 and the high half of byte 3), then 32 bits (the low half of byte 3 to the high
  // half of byte 7).
  const d = hash('sha1', prefix + identifier + salt, 'binary');
  const high = (d.charCodeAt(0) << 20) | (d.charCodeAt(1) << 12) | (d.charCodeAt(2) << 4) | (d.charCodeAt(3) >>> 4);
  const low = (((d.charCodeAt(3) & 15) << 28) | (d.charCodeAt(4) << 20) | (d.charCodeAt(5) << 12) | (d.charCodeAt(6) << 4) | (d.charCodeAt(7) >>> 4)) >>> 0;
  return (high * TWO_POW_32 + low) / LONG_SCALE;
}

/** Rollout (salt "") or variant (salt "variant") hash of a flag for an identifier. */
export function flagHash(flagKey: string, identifier: string, salt = ''): number {
  return bucketHash(flagKey + '.', identifier, salt);
}

/** Holdout groups hash the identifier without the flag key, so one holdout spans flags. */
export function holdoutHash(identifier: string): number {
  return bucketHash('holdout-', identifier, '');
}
