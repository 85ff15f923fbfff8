// Three projects: `unit` (no I/O, *.test.ts), `integration` (real Redis, PostgreSQL, the Kafka
// protocol via librdkafka's mock cluster and ClickHouse via chdb; *.int.test.ts) and `slow`
// (crash, soak and fuzz runs on the same services, minutes each; *.slow.test.ts). The global
// setup starts those services once per run (tools/testkit). `npm test` runs all three;
// `npm run test:fast` leaves out `slow`.
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
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.(int|slow)\\.test\\.ts$', '/node_modules/'] },
    { ...common, ...withServices, displayName: 'integration', testMatch: ['**/*.int.test.ts'] },
    { ...common, ...withServices, displayName: 'slow', testMatch: ['**/*.slow.test.ts'] },
  ],
};
