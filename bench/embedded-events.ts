/**
 * The requests bench:embedded posts, shared with bench/embedded-floors.ts so the floors are
 * measured on the same events: historical `/batch/` posts with persons (`$set` on every event,
 * `$identify` with `$anon_distinct_id` on every fifth), `users` distinct ids per run.
 */
export const EMBEDDED_PROJECT_KEY = 'phc_bench_token_0001';
export const EVENTS_PER_POST = 1_000;

export function embeddedBenchBodies(run: number, events: number, users: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < events; start += EVENTS_PER_POST) {
    const batch: string[] = [];
    for (let i = start; i < Math.min(events, start + EVENTS_PER_POST); i++) {
      const user = `run${run}-user-${i % users}`;
      batch.push(
        JSON.stringify({
          event: i % 5 === 0 ? '$identify' : '$pageview',
          distinct_id: user,
          timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
          properties: {
            $current_url: 'https://example.com/pricing',
            $browser: 'Chrome',
            n: i,
            $set: { plan: i % 3 ? 'pro' : 'free', last_n: i },
            ...(i % 5 === 0 ? { $anon_distinct_id: `run${run}-anon-${i % users}` } : {}),
          },
        }),
      );
    }
    out.push(`{"api_key":"${EMBEDDED_PROJECT_KEY}","historical_migration":true,"batch":[${batch.join(',')}]}`);
  }
  return out;
}
