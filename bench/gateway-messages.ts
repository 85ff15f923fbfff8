/**
 * The requests the gateway benchmark posts and the Kafka messages the gateway produces for
 * them, shared by bench:gateway and bench:kafka-client so both measure the same messages.
 */
import { encodeIngestMessage, normalizeEvent, readCapturePayload } from '@sightline/ingestion';

export const BENCH_TOKEN = 'phc_bench_token_0001';

const event = (i: number) => ({
  event: '$pageview',
  distinct_id: `user-${i % 1000}`,
  timestamp: new Date().toISOString(),
  properties: { $current_url: 'https://example.com/pricing', $browser: 'Chrome', $os: 'Mac OS X', plan: 'pro', n: i },
});

export const SHAPES = {
  single: { path: '/e/', body: JSON.stringify({ api_key: BENCH_TOKEN, ...event(1) }), events: 1 },
  batch100: { path: '/batch/', body: JSON.stringify({ api_key: BENCH_TOKEN, batch: Array.from({ length: 100 }, (_, i) => event(i)) }), events: 100 },
};
export type Shape = keyof typeof SHAPES;

/** The messages the gateway produces for one request of the shape (normalised as the gateway does). */
export function producedMessages(shape: Shape): { key: string; value: Buffer }[] {
  const payload = readCapturePayload(JSON.parse(SHAPES[shape].body));
  const ctx = { token: BENCH_TOKEN, teamId: 1, nowMs: Date.now(), sentAt: payload.sentAt, ip: '127.0.0.1', historicalMigration: false };
  return payload.events.flatMap((e) => {
    const r = normalizeEvent(e, ctx);
    return r.ok ? [{ key: r.key, value: encodeIngestMessage(r.message) }] : [];
  });
}
