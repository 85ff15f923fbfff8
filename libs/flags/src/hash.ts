import { createHash } from 'node:crypto';

/** 2^60 - 1: the largest value 15 hex digits can hold (PostHog's LONG_SCALE). */
const LONG_SCALE = 0xfffffffffffffff;

/**
 * PostHog's bucketing hash (compat §1.1): SHA-1 of `<prefix><identifier><salt>`, the first
 * 15 hex digits read as an unsigned integer and divided by 2^60-1. BigInt → Number rounds
 * to nearest, exactly as Rust's `u64 as f64` and Python's int/float do.
 */
export function bucketHash(prefix: string, identifier: string, salt = ''): number {
  const hex = createHash('sha1')
    .update(prefix + identifier + salt, 'utf8')
    .digest('hex')
    .slice(0, 15);
  return Number(BigInt('0x' + hex)) / LONG_SCALE;
}

/** Rollout (salt "") or variant (salt "variant") hash of a flag for an identifier. */
export function flagHash(flagKey: string, identifier: string, salt = ''): number {
  return bucketHash(`${flagKey}.`, identifier, salt);
}

/** Holdout groups hash the identifier without the flag key, so one holdout spans flags. */
export function holdoutHash(identifier: string): number {
  return bucketHash('holdout-', identifier, '');
}
