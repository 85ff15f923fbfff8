import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

/**
 * Carries "what project N cached changed" to every process that caches it. Messages default to
 * a project id (flag definitions, project tokens); the persons cache sends what exactly changed.
 */
export interface InvalidationChannel<M = number> {
  publish(message: M): Promise<void>;
  /** `handler(null)` means "anything may have changed" (e.g. after a reconnect). */
  subscribe(handler: (message: M | null) => void): Promise<void>;
  close(): Promise<void>;
}

/** How a channel's messages travel through Redis; a message that cannot be read means "anything may have changed". */
export interface InvalidationCodec<M> {
  encode(message: M): string;
  decode(text: string): M | null;
}

const projectIdCodec: InvalidationCodec<number> = {
  encode: String,
  decode: (text) => {
    const teamId = Number(text);
    return Number.isInteger(teamId) ? teamId : null;
  },
};

/** Embedded mode: one process, so an in-memory emitter reaches every cache (messages are passed as they are). */
export function createInMemoryInvalidation<M = number>(): InvalidationChannel<M> {
  const emitter = new EventEmitter();
  return {
    async publish(message) {
      emitter.emit('changed', message);
    },
    async subscribe(handler) {
      emitter.on('changed', handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

/**
 * Distributed mode: Redis pub/sub. A subscriber that loses its connection may miss
 * messages, so every (re)subscription also reports "anything may have changed".
 */
export function createRedisInvalidation<M = number>(redisUrl: string, options: { channel: string; codec?: InvalidationCodec<M> }): InvalidationChannel<M> {
  const channel = options.channel;
  const codec = options.codec ?? (projectIdCodec as unknown as InvalidationCodec<M>);
  // Loaded here, not at import: the embedded mode never needs it, and it is start time.
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const publisher = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  // A failed publish rejects; the connection's own errors must not crash (or, unheard, be logged by
  // ioredis) in a process that only publishes, such as the admin command.
  publisher.on('error', () => undefined);
  let subscriber: Redis | null = null;
  return {
    async publish(message) {
      await publisher.publish(channel, codec.encode(message));
    },
    async subscribe(handler) {
      subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
      subscriber.on('message', (_channel: string, text: string) => handler(codec.decode(text)));
      // Connection errors are retried by ioredis; they must not crash the process.
      subscriber.on('error', () => undefined);
      subscriber.on('ready', () => handler(null));
      await subscriber.subscribe(channel);
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}
