/**
 * Hosts librdkafka's mock Kafka cluster in this process, with topics created at the partition
 * count given (the mock creates auto-created topics with 4, and kcat cannot ask for more):
 *   node --import tsx tools/local-services/src/kafka-mock-host.ts --brokers 3 --partitions 12 --topic events …
 * It prints `ready <broker>,<broker>,…` once the topics exist, and runs until SIGTERM/SIGINT.
 * The C API is reached through koffi (an FFI for Node); librdkafka.so.1 comes with Debian's
 * librdkafka1 package.
 */
import { parseArgs } from 'node:util';
import koffi from 'koffi';

const RD_KAFKA_PRODUCER = 0;
const ERRSTR_SIZE = 512;

function main(): void {
  const { values } = parseArgs({
    options: {
      brokers: { type: 'string', default: '3' },
      partitions: { type: 'string', default: '4' },
      topic: { type: 'string', multiple: true, default: [] },
    },
  });
  const brokers = Number(values.brokers);
  const partitions = Number(values.partitions);
  if (!Number.isInteger(brokers) || brokers < 1 || !Number.isInteger(partitions) || partitions < 1) {
    throw new Error('kafka-mock-host: --brokers and --partitions must be positive integers');
  }

  const lib = koffi.load('librdkafka.so.1');
  const confNew = lib.func('void *rd_kafka_conf_new()');
  const confSet = lib.func('int rd_kafka_conf_set(void *conf, const char *name, const char *value, _Out_ uint8_t *errstr, size_t errstr_size)');
  const kafkaNew = lib.func('void *rd_kafka_new(int type, void *conf, _Out_ uint8_t *errstr, size_t errstr_size)');
  const mockClusterOf = lib.func('void *rd_kafka_handle_mock_cluster(void *rk)');
  const bootstraps = lib.func('const char *rd_kafka_mock_cluster_bootstraps(void *mcluster)');
  const topicCreate = lib.func('int rd_kafka_mock_topic_create(void *mcluster, const char *topic, int partition_cnt, int replication_factor)');
  const errorName = lib.func('const char *rd_kafka_err2name(int err)');

  const errstr = Buffer.alloc(ERRSTR_SIZE);
  const message = () => errstr.toString('utf8', 0, Math.max(0, errstr.indexOf(0)));
  const conf = confNew();
  if (confSet(conf, 'test.mock.num.brokers', String(brokers), errstr, ERRSTR_SIZE) !== 0) throw new Error(`rd_kafka_conf_set: ${message()}`);
  // The handle owns the mock cluster; it only ever idles (it produces nothing).
  const handle = kafkaNew(RD_KAFKA_PRODUCER, conf, errstr, ERRSTR_SIZE);
  if (!handle) throw new Error(`rd_kafka_new: ${message()}`);
  const cluster = mockClusterOf(handle);
  if (!cluster) throw new Error('rd_kafka_handle_mock_cluster: no mock cluster');
  for (const topic of values.topic) {
    const err = topicCreate(cluster, topic, partitions, Math.min(3, brokers));
    if (err !== 0) throw new Error(`creating topic ${topic}: ${errorName(err)}`);
  }
  process.stdout.write(`ready ${bootstraps(cluster)}\n`);
  // The mock runs on librdkafka's own threads. This keeps the process alive, and the library
  // too: koffi unloads a library whose object is garbage-collected, and the mock's threads
  // then jump into unmapped code.
  const keepAlive = setInterval(() => [lib, handle], 60_000);
  const stop = () => {
    clearInterval(keepAlive);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
