import { describeHogQLQueryFuzz } from '../testing/hogql-query-fuzz';

// The long run: a new seed each time, printed by fast-check when a query fails. 300 queries keep
// it near a minute inside npm test's budget; HOGQL_SELECT_FUZZ_LONG_RUNS runs more.
describeHogQLQueryFuzz('HogQL queries from a hostile generator, long run', Number(process.env['HOGQL_SELECT_FUZZ_LONG_RUNS'] ?? 300), Date.now() % 2 ** 31);
