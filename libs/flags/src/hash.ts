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
  const hex = hash('sha1', prefix + identifier + salt, 'hex');
  const high = parseInt(hex.slice(0, 7), 16);
  const low = parseInt(hex.slice(7, 15), 16);
  return (high * TWO_POW_32 + low) / LONG_SCALE;
}

/** Rollout (salt "") or variant (salt "variant") hash of a flag for an identifier. */
export function flagHash(flagKey: string, identifier: string, salt = ''): number {
  return bucketHash(`${flagKey}.`, identifier, salt);
}

/** Holdout groups hash the identifier without the flag key, so one holdout spans flags. */
export function holdoutHash(identifier: string): number {
  return bucketHash('holdout-', identifier, '');
}
