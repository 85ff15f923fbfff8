/**
 * @sightline/testkit: helpers for integration tests (*.int.test.ts) that use
 * the services started once per jest run by global-setup.ts. Importing this
 * module has no side effects.
 */
import { readServicesFile, type TestServices } from './service-info';

export type { TestServices } from './service-info';
export { uniqueName } from './names';
export { pauseKafka, resumeKafka } from './kafka-outage';
export { waitFor, type WaitForOptions } from '@sightline/local-services';
export { freePort, startProcess, stopStartedProcesses, type StartProcessOptions, type StartedProcess } from './processes';
export { createTestClickHouseDatabase, createTestPostgresDatabase, type TestClickHouseDatabase, type TestPostgresDatabase } from './databases';

/** Where the shared Redis, PostgreSQL, Kafka mock and ClickHouse front listen. */
export function testServices(): TestServices {
  const { redisUrl, postgresAdminUrl, kafkaBrokers, kcatPid, clickhouseUrl } = readServicesFile();
  return { redisUrl, postgresAdminUrl, kafkaBrokers, kcatPid, clickhouseUrl };
}
export { hostileBodies, hostileJsonKey, hostileJsonValue, hostileQueryValue, hugeJsonValue, injectJson, jsonPaths } from './hostile-json';
export { insertCohort, insertFlag, insertGroup, insertGroupType, insertPerson } from './flag-rows';
export { startOutageProxy, type OutageProxy } from './outage-proxy';
export { createEmbeddedTestStores, createInProcessClickHouseTestStores, createTestStores, type TestStores } from './test-stores';
export { testEventRow } from './event-rows';
export {
  DISTRIBUTED_VARS,
  EMBEDDED_LISTENING,
  EMBEDDED_SOURCE_NODE_ARGS,
  EMBEDDED_STARTUP_TIMEOUT_MS,
  npmStartNodeArgs,
  startEmbeddedSightline,
  type EmbeddedSightline,
} from './embedded-sightline';
export * from './person-rows';
export { CHROMIUM_PATH, DESKTOP_CHROME_USER_AGENT, launchChromium, type Chromium } from './chromium';
export { startPageServer, type PageServer, type ServedPage } from './page-server';
export { startSdkTarget, type SdkTarget, type StoredEvent, type StoredPerson } from './sdk-target';
export { decodeSdkBody, eventsOf, formatRequests, type SdkRequest } from './sdk-requests';
export { getJson, postJson, requestJson, type JsonAnswer } from './http-json';
export { startRecordingProxy, type RecordingProxy } from './recording-proxy';
export { waitForSubscribers } from './redis-subscribers';
export { distributedReadsWithoutGlobal, formatWithClickHouse, recordStatements, type RecordedStatements } from './cluster-sql';
export { hogqlExpression } from './hogql-expressions';
export { hostileHogQLQuery } from './hogql-queries';
export { AGGREGATE_SAMPLES, aggregateSample, FUNCTION_SAMPLES, SAMPLE_EVENT_FIELDS, SAMPLE_EVENTS_SQL } from './hogql-function-samples';
export { insertJourneys, journeyPersonUuid, journeyTimeMs, type JourneyEvent, type JourneyOptions, type JourneyPeople } from './journeys';
