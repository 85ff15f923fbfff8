import type { Logger } from '@sightline/logger';
import type { EventBus } from './event-bus';
import { createInProcessBus } from './in-process-bus';
import { createKafkaBus } from './kafka-bus';

/** The bus adapter factory: Kafka when brokers are configured, otherwise the in-process bus. */
export function createEventBus(
  config: {
    brokers?: string;
    clientId: string;
    sendTimeoutMs?: number;
    idempotent?: boolean;
    lingerMs?: number;
    maxRequestBytes?: number;
    /** In-process bus only: partitions per topic (see InProcessBusOptions). */
    inProcessPartitions?: number;
  },
  logger: Logger,
): EventBus {
  if (config.brokers) {
    const brokers = config.brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    return createKafkaBus(
      {
        brokers,
        clientId: config.clientId,
        sendTimeoutMs: config.sendTimeoutMs,
        idempotent: config.idempotent,
        lingerMs: config.lingerMs,
        maxRequestBytes: config.maxRequestBytes,
      },
      logger,
    );
  }
  return createInProcessBus(logger, { partitions: config.inProcessPartitions });
}
