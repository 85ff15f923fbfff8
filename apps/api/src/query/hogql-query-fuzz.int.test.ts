import { describeHogQLQueryFuzz } from '../testing/hogql-query-fuzz';

// A few seconds: HOGQL_SELECT_FUZZ_RUNS (and _SEED) for another run; hogql-query-fuzz.slow.test.ts runs long.
describeHogQLQueryFuzz(
  'HogQL queries from a hostile generator',
  Number(process.env['HOGQL_SELECT_FUZZ_RUNS'] ?? 60),
  Number(process.env['HOGQL_SELECT_FUZZ_SEED'] ?? 29),
);
