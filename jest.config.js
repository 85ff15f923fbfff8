// Two projects: `unit` (no I/O, *.test.ts) and `integration` (real Redis, PostgreSQL,
// the Kafka protocol via librdkafka's mock cluster and ClickHouse via chdb; *.int.test.ts).
// The integration global setup starts those services once per run (tools/testkit).
const tsJest = ['ts-jest', { diagnostics: false }];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/test'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.int\\.test\\.ts$', '/node_modules/'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['**/*.int.test.ts'],
      globalSetup: '<rootDir>/tools/testkit/src/global-setup.ts',
      globalTeardown: '<rootDir>/tools/testkit/src/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/tools/testkit/src/jest-setup.ts'],
      testTimeout: 120000,
    },
  ],
};
