import type { BusMessage } from './event-bus';

/** One caller's send waiting in the producer queue. */
export interface QueuedSend {
  topic: string;
  messages: readonly BusMessage[];
  /** Index of the next message of this send to hand to the producer. */
  taken: number;
  /** The caller gave up (timeout) before any of its messages was handed over: never sent. */
  cancelled: boolean;
  failed: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A slice of one queued send that goes into the next produce request. */
export interface RequestPart {
  entry: QueuedSend;
  from: number;
  to: number;
}

export const messageBytes = (m: BusMessage) => (typeof m.value === 'string' ? m.value.length : m.value.byteLength) + m.key.length;

/**
 * Takes the next produce request off the front of `queue`: up to `maxRequestBytes` of messages
 * (at least one, however large), in queue order, splitting a send that does not fit so its rest
 * leads the next request. Cancelled and failed sends are dropped from the front. Mutates the
 * queue and the sends' `taken`.
 */
export function takeRequest(queue: QueuedSend[], maxRequestBytes: number): RequestPart[] {
  const parts: RequestPart[] = [];
  let bytes = 0;
  while (queue.length > 0) {
    const entry = queue[0]!;
    if (entry.cancelled || entry.failed) {
      queue.shift();
      continue;
    }
    const from = entry.taken;
    let to = from;
    while (to < entry.messages.length && (bytes === 0 || bytes + messageBytes(entry.messages[to]!) <= maxRequestBytes)) {
      bytes += messageBytes(entry.messages[to]!);
      to++;
    }
    if (to === from) break; // request full
    entry.taken = to;
    parts.push({ entry, from, to });
    if (to < entry.messages.length) break; // the rest of this send goes in the next request
    queue.shift();
  }
  return parts;
}

export interface ProduceQueueOptions {
  maxRequestBytes: number;
  lingerMs: number;
  sendTimeoutMs: number;
  /** Sends one request (all topics); rejects when the broker did not acknowledge it. */
  produce(topicMessages: { topic: string; messages: BusMessage[] }[]): Promise<void>;
  onProduceFailed(error: unknown, messages: number): void;
}

/**
 * Producer batching: sends of concurrent callers queue here and go out together, one produce
 * request at a time (acks=-1 in `produce`, so order per key holds across requests). A send
 * settles once all its messages were acknowledged, or fails with its request; a send not yet
 * handed over when its caller's deadline passes is dropped, so a request answered 503 is not
 * written later.
 */
export function createProduceQueue(options: ProduceQueueOptions) {
  const { maxRequestBytes, lingerMs, sendTimeoutMs } = options;
  const queue: QueuedSend[] = [];
  let flushing: Promise<void> | undefined;
  let lingerTimer: NodeJS.Timeout | undefined;
  let closing = false;

  const produce = async (parts: RequestPart[]) => {
    const byTopic = new Map<string, BusMessage[]>();
    for (const { entry, from, to } of parts) {
      let list = byTopic.get(entry.topic);
      if (!list) byTopic.set(entry.topic, (list = []));
      for (let i = from; i < to; i++) {
        const m = entry.messages[i]!;
        list.push({ key: m.key, value: m.value, headers: m.headers });
      }
    }
    try {
      await options.produce([...byTopic].map(([topic, messages]) => ({ topic, messages })));
    } catch (error) {
      for (const { entry } of parts) {
        entry.failed = true;
        entry.reject(error as Error);
      }
      options.onProduceFailed(
        error,
        parts.reduce((n, p) => n + p.to - p.from, 0),
      );
      return;
    }
    for (const { entry, to } of parts) if (to === entry.messages.length && !entry.failed) entry.resolve();
  };

  const flush = async () => {
    for (;;) {
      const parts = takeRequest(queue, maxRequestBytes);
      if (parts.length === 0) return;
      await produce(parts);
    }
  };

  const startFlush = () => {
    lingerTimer = undefined;
    if (flushing) return;
    flushing = flush().finally(() => {
      flushing = undefined;
      if (queue.length > 0) scheduleFlush();
    });
  };

  /** While a request is in flight the queue fills by itself; when idle, linger briefly. */
  function scheduleFlush() {
    if (flushing || lingerTimer) return;
    if (closing || lingerMs <= 0) startFlush();
    else lingerTimer = setTimeout(startFlush, lingerMs);
  }

  return {
    send(topic: string, messages: readonly BusMessage[]): Promise<void> {
      if (closing) return Promise.reject(new Error('kafka bus closed'));
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          entry.cancelled = true;
          entry.reject(new Error(`kafka send timed out after ${sendTimeoutMs} ms`));
        }, sendTimeoutMs);
        const entry: QueuedSend = {
          topic,
          messages,
          taken: 0,
          cancelled: false,
          failed: false,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        queue.push(entry);
        scheduleFlush();
      });
    },
    /** Stops taking sends and flushes what callers still wait for. */
    async close(): Promise<void> {
      closing = true;
      if (lingerTimer) {
        clearTimeout(lingerTimer);
        startFlush();
      }
      while (flushing) await flushing;
    },
  };
}
