/**
 * @sightline/local-services: starts the servers Sightline runs on (Redis, PostgreSQL, the
 * librdkafka Kafka mock, a chdb-backed ClickHouse HTTP front, nginx) as local processes, for
 * the tests (tools/testkit) and the local cluster (tools/cluster). Importing it has no side effects.
 */
export { freePort, spawnTiedToParent, isAlive, signalQuietly, childExited, stopChild } from './processes';
export { waitFor, type WaitForOptions } from './wait-for';
export { ServiceLauncher, REPO_ROOT, type ServiceProcess, type StartedService, type SpawnServiceOptions } from './service-launcher';
export { startRedis, type RedisOptions } from './redis';
export { startPostgres, type PostgresOptions } from './postgres';
export { startKafkaMock, startKafkaMockCluster, type KafkaMockClusterOptions } from './kafka-mock';
export { startClickHouseFront } from './clickhouse-front';
export { startNginx, checkNginxConfig, nginxBinary, type RunningNginx } from './nginx';
