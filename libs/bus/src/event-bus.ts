/** A message to publish. Messages with the same key keep their order. */
export interface BusMessage {
  key: string;
  value: string | Buffer;
  headers?: Record<string, string>;
  /**
   * The object `value` is the JSON of, when the sender has it (JSON.parse(value) equals it).
   * The in-process bus hands it to the consumer as it is, so an embedded service neither
   * encodes nor decodes the message on its way (`value` may then be a getter that encodes it
   * only if something reads it, e.g. a dead letter). Kafka sends `value` and ignores it.
   */
  decoded?: unknown;
}

export interface ConsumedMessage {
  key: string | null;
  value: Buffer;
  headers: Record<string, string>;
  /** Position in its partition (Kafka offset, or a sequence number in-process). */
  offset: string;
  /** In-process bus only: the sender's `decoded` (the object `value` is the JSON of), not to be modified. */
  decoded?: unknown;
}

export interface ConsumedBatch {
  topic: string;
  partition: number;
  messages: ConsumedMessage[];
}

/**
 * Called with each batch. Resolving means every message of the batch is durably handled
 * (written, or dead-lettered); only then does the bus commit past it. Rejecting means
 * "not handled": the bus retries the batch with backoff and commits nothing.
 */
export type BatchHandler = (batch: ConsumedBatch) => Promise<void>;

export interface Subscription {
  /** Finishes the batch in hand, commits it, and stops. */
  stop(): Promise<void>;
  /** Milliseconds since the consumer loop last made progress (liveness). */
  idleMs(): number;
  /**
   * The group's lag on every partition of the topic, now: messages written to the partition
   * that the group has not committed past. `owned`: this member consumes the partition.
   */
  lag?(): Promise<PartitionLag[]>;
}

export interface PartitionLag {
  partition: number;
  /** Messages behind (Kafka: high watermark less the committed offset). */
  lag: number;
  /** Whether this member is the one consuming the partition. */
  owned: boolean;
}

export interface SubscribeOptions {
  groupId: string;
  topic: string;
  handler: BatchHandler;
  /**
   * Most messages per handler call. A larger fetched batch is handed over in chunks of
   * this size, each committed once handled: the commit always covers a contiguous prefix.
   */
  maxBatchSize?: number;
  /** Partitions handled at once (Kafka). 1 keeps a topic strictly sequential in this process. */
  concurrency?: number;
  /** How long the broker waits for a silent member (killed process) before reassigning its partitions (Kafka). */
  sessionTimeoutMs?: number;
}

export interface EventBus {
  /**
   * Reads every message's `value` (its bytes) to send it: Kafka. The in-process bus hands
   * `decoded` over instead, and a producer that needs no bytes need not encode them.
   */
  readonly readsValues?: boolean;
  /** Resolves only once every message is durable (Kafka: acks=-1; in-process: the consumer wrote it). */
  send(topic: string, messages: readonly BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Readiness: the bus can accept messages now. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface Topics {
  events: string;
  eventsHistorical: string;
  deadLetter: string;
}

export function topicNames(prefix: string): Topics {
  return { events: `${prefix}events`, eventsHistorical: `${prefix}events_historical`, deadLetter: `${prefix}events_dlq` };
}

/** Exponential backoff with jitter, capped. */
export function backoffMs(attempt: number, baseMs = 200, capMs = 10_000): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
