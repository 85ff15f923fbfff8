import { encodeIngestMessage, normalizeEvent, readCapturePayload, exceedsBusMessageBytes } from '@sightline/ingestion';
import { SHAPES, BENCH_TOKEN } from './gateway-messages';
const body = SHAPES.batch100.body;
const R = 3000;
const run = (label: string, fn: (events: unknown[], ctx: any) => void) => {
  const events = Array.from({ length: R }, () => readCapturePayload(JSON.parse(body)));
  for (let i = 0; i < 300; i++) fn(events[i]!.events, { token: BENCH_TOKEN, teamId: 1, nowMs: Date.now(), sentAt: null, ip: '127.0.0.1', historicalMigration: false });
  const t = process.cpuUsage();
  for (let i = 300; i < R; i++) fn(events[i]!.events, { token: BENCH_TOKEN, teamId: 1, nowMs: Date.now(), sentAt: null, ip: '127.0.0.1', historicalMigration: false });
  const c = process.cpuUsage(t);
  console.log(label, ((c.user + c.system) / ((R - 300) * 100)).toFixed(3), 'µs/event');
};
const t0 = process.cpuUsage(); for (let i = 0; i < 2000; i++) JSON.parse(body); const c0 = process.cpuUsage(t0); console.log('JSON.parse', ((c0.user + c0.system) / 200000).toFixed(3), 'µs/event');
run('normalize', (evs, ctx) => { for (const e of evs) normalizeEvent(e, ctx); });
run('normalize+size', (evs, ctx) => { for (const e of evs) { const r = normalizeEvent(e, ctx); if (r.ok) exceedsBusMessageBytes(r.message); } });
run('normalize+size+encode', (evs, ctx) => { for (const e of evs) { const r = normalizeEvent(e, ctx); if (r.ok) { exceedsBusMessageBytes(r.message); encodeIngestMessage(r.message); } } });
