import { describeHogQLQueryFuzz } from '../testing/hogql-query-fuzz';

// The long run (minutes): a new seed each time, printed by fast-check when a query fails.
describeHogQLQueryFuzz('HogQL queries from a hostile generator, long run', 1_000, Date.now() % 2 ** 31);
