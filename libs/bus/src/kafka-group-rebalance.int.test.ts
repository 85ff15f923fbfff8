import path from 'node:path';
import { silentLogger } from '@sightline/logger';
import { startProcess, testServices, uniqueName, waitFor } from '@sightline/testkit';
import type { EventBus } from './event-bus';
import { createKafkaBus } from './kafka-bus';

const ROOT = path.resolve(__dirname, '..', '..', '..');
/** The worker's shortest session timeout: how long the group waits for a killed member. */
const SESSION_TIMEOUT_MS = 6000;

/**
 * A member of a consumer group is killed (SIGKILL, so it never leaves): once its session
 * expires the group rebalances, and a member that commits during the rebalance is refused
 * (REBALANCE_IN_PROGRESS). It must rejoin and take over the dead member's partitions; it used
 * to crash for good (kafkajs wraps the refusal of an explicit commit as non-retriable), leaving
 * every surviving worker of a cluster up, ready and consuming nothing.
 */
describe('Kafka consumer group when a member dies', () => {
  const buses: EventBus[] = [];
  const bus = () => {
    const b = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('rebalance') }, silentLogger());
    buses.push(b);
    return b;
  };
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
  });

  it('the surviving member rejoins and consumes everything, the dead member’s partitions included', async () => {
    const topic = uniqueName('rebalance');
    const groupId = uniqueName('g');
    const producer = bus();
    const received = new Set<string>();
    await bus().subscribe({
      groupId,
      topic,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      maxBatchSize: 20,
      handler: async ({ messages }) => {
        for (const m of messages) received.add(m.value.toString());
      },
    });
    const other = await startProcess(
      process.execPath,
      ['--import', 'tsx', 'libs/bus/src/testing/group-member.ts', testServices().kafkaBrokers.join(','), topic, groupId, String(SESSION_TIMEOUT_MS)],
      { cwd: ROOT, readyPattern: /^joined$/m, timeoutMs: 60_000 },
    );

    // Messages on every partition, all the while: each member commits after every chunk.
    let sent = 0;
    let producing = true;
    const production = (async () => {
      while (producing) {
        await producer.send(
          topic,
          Array.from({ length: 10 }, () => ({ key: `k${sent % 40}`, value: String(sent++) })),
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Both members hold partitions and consume.
    await waitFor(() => /^got /m.test(other.output()) && received.size > 0, { timeoutMs: 60_000, description: 'both members consuming' });
    other.kill('SIGKILL');
    // The session expires, the group rebalances, the survivor takes every partition.
    await new Promise((resolve) => setTimeout(resolve, SESSION_TIMEOUT_MS + 8000));
    producing = false;
    await production;
    // What the dead member handled before it died was committed by it (or is handled again here).
    for (const line of other.output().match(/^got .*$/gm) ?? []) for (const value of line.slice(4).split(',')) received.add(value);
    const missing = () => Array.from({ length: sent }, (_, i) => String(i)).filter((v) => !received.has(v));
    await waitFor(() => missing().length === 0, { timeoutMs: 60_000, intervalMs: 250, description: `all ${sent} messages handled` }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; ${missing().length} never handled`);
    });
  });
});
