import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/** The library's `Algorithm.Argon2id` (a const enum, which isolated modules cannot read). */
const ARGON2ID = 2;

/**
 * Passwords are hashed with argon2id (OWASP's first choice) by @node-rs/argon2: maintained, and
 * its native binary ships inside a per-platform npm package, so installing it downloads nothing
 * else. Its defaults (19 MiB, 2 passes, 1 lane) are OWASP's minimum recommended settings.
 */
export async function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

/** false for a wrong password and for a stored value that is not a hash this library reads. */
export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}

export const MIN_PASSWORD_LENGTH = 8;
/** argon2 takes any length; a bound keeps one request from hashing megabytes. */
export const MAX_PASSWORD_LENGTH = 256;

/** A random secret for a cookie or a one-time link (256 bits, URL-safe). */
export function generateSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** How a session or setup token is stored: its SHA-256, so the table alone signs nobody in. */
export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time string comparison (for CSRF tokens). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
