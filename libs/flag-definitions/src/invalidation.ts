import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

/** Carries "the flags of project N changed" to every process that caches definitions. */
export interface InvalidationChannel {
  publish(teamId: number): Promise<void>;
  /** `handler(null)` means "anything may have changed" (e.g. after a reconnect). */
  subscribe(handler: (teamId: number | null) => void): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: one process, so an in-memory emitter reaches every cache. */
export function createInMemoryInvalidation(): InvalidationChannel {
  const emitter = new EventEmitter();
  return {
    async publish(teamId) {
      emitter.emit('changed', teamId);
    },
    async subscribe(handler) {
      emitter.on('changed', handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

export const FLAG_CHANGES_CHANNEL = 'sightline:feature-flags:changed';

/**
 * Distributed mode: Redis pub/sub. A subscriber that loses its connection may miss
 * messages, so every (re)subscription also reports "anything may have changed".
 */
export function createRedisInvalidation(redisUrl: string, options: { channel?: string } = {}): InvalidationChannel {
  const channel = options.channel ?? FLAG_CHANGES_CHANNEL;
  // Loaded here, not at import: the embedded mode never needs it, and it is start time.
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const publisher = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  let subscriber: Redis | null = null;
  return {
    async publish(teamId) {
      await publisher.publish(channel, String(teamId));
    },
    async subscribe(handler) {
      subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
      subscriber.on('message', (_channel: string, message: string) => {
        const teamId = Number(message);
        handler(Number.isInteger(teamId) ? teamId : null);
      });
      // Connection errors are retried by ioredis; they must not crash the process.
      subscriber.on('error', () => undefined);
      publisher.on('error', () => undefined);
      subscriber.on('ready', () => handler(null));
      await subscriber.subscribe(channel);
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}
