/** A bounded HogQL fuzz run for every `npm test` (the long one is hogql-fuzz.slow.test.ts); HOGQL_FUZZ_RUNS raises it. */
import { describeHogQLFuzz } from '../testing/hogql-fuzz';

describeHogQLFuzz(Number(process.env['HOGQL_FUZZ_RUNS'] ?? 40));
