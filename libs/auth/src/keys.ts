import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  // Rejection sampling keeps every character equally likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Public project token, sent by SDKs with every event. */
export const generateProjectApiKey = () => `phc_${randomToken(43)}`;
/** Secret personal API key; only its hash is stored. */
export const generatePersonalApiKey = () => `phx_${randomToken(47)}`;

/** Keys are long random strings, so an unsalted SHA-256 is enough and allows lookup by hash. */
export function hashPersonalApiKey(key: string): string {
  return `sha256$${createHash('sha256').update(key).digest('hex')}`;
}

export function maskPersonalApiKey(key: string): string {
  return `${key.slice(0, 6)}...${key.slice(-4)}`;
}
