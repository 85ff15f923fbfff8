/** The long HogQL fuzz run (slow tier): the integration tier's run, with many more expressions. */
import { describeHogQLFuzz } from '../testing/hogql-fuzz';

describeHogQLFuzz(Number(process.env['HOGQL_FUZZ_RUNS'] ?? 200));
