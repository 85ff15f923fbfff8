import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, type ServiceLauncher } from './service-launcher';

/** The mock cluster prints its brokers at start-up, e.g. "… replaced with 127.0.0.1:1,127.0.0.1:2". */
const MOCK_BROKERS_PATTERN = /(?:bootstrap\.servers=|replaced with )(127\.0\.0\.1:\d+(?:,127\.0\.0\.1:\d+)*)/;

/**
 * librdkafka's mock cluster (3 brokers), hosted by a kcat consumer. Topics are
 * auto-created with 4 partitions (the mock's fixed default). kafkajs admin createTopics and
 * idempotent producers do not work against it. `-q` keeps the start-up notice that names
 * the brokers while silencing per-partition chatter.
 */
export async function startKafkaMock(launcher: ServiceLauncher): Promise<{ kafkaBrokers: string[]; kcatPid: number }> {
  const child = launcher.spawnService(
    'kafka-mock',
    'kcat',
    ['-q', '-b', 'localhost:1', '-X', 'test.mock.num.brokers=3', '-C', '-t', 'sightline-mock-anchor'],
    // SIGKILL also ends a process left SIGSTOPped by a test.
    { stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  const logFile = launcher.logFile('kafka-mock');
  const brokers = await launcher.waitUntilReady('kafka-mock', child, async () => {
    const match = MOCK_BROKERS_PATTERN.exec(fs.readFileSync(logFile, 'utf8'));
    return match ? match[1].split(',') : false;
  });
  return { kafkaBrokers: brokers, kcatPid: child.pid as number };
}

export interface KafkaMockClusterOptions {
  brokers: number;
  /** Topics created before the brokers are announced, each with `partitions` partitions. */
  topics: readonly string[];
  partitions: number;
}

/**
 * The same librdkafka mock cluster with its topics created up front, so they have the
 * partition count asked for: the mock answers neither CreateTopics nor CreatePartitions, and
 * kcat has no option for the count of auto-created topics (always 4), so this process hosts
 * the mock itself through librdkafka's C API (kafka-mock-host.ts). Needs librdkafka.so.1
 * (Debian's librdkafka1, which kcat depends on).
 */
export async function startKafkaMockCluster(launcher: ServiceLauncher, options: KafkaMockClusterOptions): Promise<{ kafkaBrokers: string[]; pid: number }> {
  const child = launcher.spawnService(
    'kafka',
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(__dirname, 'kafka-mock-host.ts'),
      '--brokers',
      String(options.brokers),
      '--partitions',
      String(options.partitions),
      ...options.topics.flatMap((topic) => ['--topic', topic]),
    ],
    { cwd: REPO_ROOT, stopSignal: 'SIGTERM', urgentSignal: 'SIGKILL' },
  );
  const logFile = launcher.logFile('kafka');
  const brokers = await launcher.waitUntilReady('kafka', child, async () => {
    const match = /^ready (\S+)$/m.exec(fs.readFileSync(logFile, 'utf8'));
    return match ? match[1]!.split(',') : false;
  });
  return { kafkaBrokers: brokers, pid: child.pid as number };
}
