/**
 * A consumer group member in a process of its own, for tests that kill one (SIGKILL: it never
 * leaves the group, its session has to expire):
 *   node --import tsx libs/bus/src/testing/group-member.ts <brokers> <topic> <groupId> <sessionTimeoutMs>
 * Prints `joined` once subscribed and `got <value>,<value>,…` for each batch it handled.
 */
import { silentLogger } from '@sightline/logger';
import { createKafkaBus } from '../kafka-bus';

async function main(): Promise<void> {
  const [brokers, topic, groupId, sessionTimeoutMs] = process.argv.slice(2);
  if (!brokers || !topic || !groupId || !sessionTimeoutMs) throw new Error('usage: group-member.ts <brokers> <topic> <groupId> <sessionTimeoutMs>');
  const bus = createKafkaBus({ brokers: brokers.split(','), clientId: `member-${process.pid}` }, silentLogger());
  await bus.subscribe({
    groupId,
    topic,
    sessionTimeoutMs: Number(sessionTimeoutMs),
    maxBatchSize: 20,
    handler: async ({ messages }) => {
      process.stdout.write(`got ${messages.map((m) => m.value.toString()).join(',')}\n`);
    },
  });
  process.stdout.write('joined\n');
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
