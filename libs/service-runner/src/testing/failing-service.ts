// A service started by runService exactly as the apps start theirs, with the embedded stores
// open (chdb, and PGlite on its thread), that then fails as the first argument says:
//   heap       allocates until the JavaScript heap is out of memory (run it with a small
//              --max-old-space-size)
//   exception  throws from a timer (an uncaught exception)
//   rejection  leaves a promise rejected with no handler
// Used by fatal-exit.int.test.ts, which expects every one of them to end the process non-zero.
import { queryClickhouse } from '@sightline/clickhouse';
import { runtimeEnv } from '@sightline/config';
import { runService } from '../index';

const failure = process.argv[2];
const dataDir = process.argv[3]!;

runService({
  name: 'failing-service',
  env: { ...runtimeEnv, PORT: { type: 'integer', description: 'port', default: 0, minimum: 0 } },
  async start({ openAnalyticsStore, openMetadataStore }) {
    const [ch] = await Promise.all([openAnalyticsStore({ dataDir }), openMetadataStore({ dataDir })]);
    await queryClickhouse(ch, { kind: 'service.open_check', teamId: null, sql: 'SELECT 1' });
    return {
      app: (_req, res) => res.end('ok'),
      afterListen: () => {
        process.stdout.write('failing-service: listening\n');
        setTimeout(() => {
          if (failure === 'heap') {
            const kept: unknown[] = [];
            for (;;) kept.push(Array.from({ length: 10_000 }, (_, i) => ({ i })));
          }
          if (failure === 'exception') throw new Error('failing-service: nobody catches this');
          if (failure === 'rejection') void Promise.reject(new Error('failing-service: nobody handles this'));
        }, 50);
      },
    };
  },
});
