// Four projects, one per tier, told apart by the file name:
// - `unit` (*.test.ts): no I/O, seconds in all; `npm run test:quick` runs it after the type-check.
// - `integration` (*.int.test.ts): one component against real Redis, PostgreSQL, the Kafka protocol
//   via librdkafka's mock cluster and ClickHouse via chdb.
// - `e2e` (*.e2e.test.ts): the assembled product from outside: the apps as real processes, the web
//   app and posthog-js in headless Chromium, the official SDKs, `npm start`'s bundle. (The checks
//   of the deployment files against the code read files only: they stay in `unit`, so that
//   test:quick catches a config change the compose files do not follow.)
// - `slow` (*.slow.test.ts): crash, soak and fuzz runs on the same services, minutes each.
// The global setup starts the services once per run for every project that needs them
// (tools/testkit). `npm run test:fast` runs unit and integration; `npm test` runs all four and
// prints the slowest files (tools/testkit/src/slowest-files-reporter.cjs).
const tsJest = ['ts-jest', { diagnostics: false }];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/test'],
};
const withServices = {
  globalSetup: '<rootDir>/tools/testkit/src/global-setup.ts',
  globalTeardown: '<rootDir>/tools/testkit/src/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/tools/testkit/src/jest-setup.ts'],
  testTimeout: 120000,
};
module.exports = {
  // Test files run in a worker process that is replaced once it holds more than this after a file:
  // in one process (jest's default on 2 cores) what each file's module registry leaves behind adds
  // up over the ~180 files until the heap runs out (seen at 4 GB after 22 minutes).
  workerIdleMemoryLimit: '1GB',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.(int|e2e|slow)\\.test\\.ts$', '/node_modules/'] },
    { ...common, ...withServices, displayName: 'integration', testMatch: ['**/*.int.test.ts'] },
    { ...common, ...withServices, displayName: 'e2e', testMatch: ['**/*.e2e.test.ts'] },
    { ...common, ...withServices, displayName: 'slow', testMatch: ['**/*.slow.test.ts'] },
  ],
};
