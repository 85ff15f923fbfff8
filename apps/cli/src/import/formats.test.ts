import fs from 'node:fs';
import path from 'node:path';
import { checkEvent } from './event-check';
import { mapRecord, type FieldMap, type Format } from './formats';
import { readSource } from './source-reader';

const fixture = (name: string) => path.join(__dirname, '..', '..', 'test-fixtures', name);

async function eventsOf(file: string, format: Format, map: FieldMap = {}) {
  const out = [];
  for await (const item of readSource(fixture(file), format === 'csv' ? 'csv' : 'jsonl')) {
    if ('invalid' in item) throw new Error(`line ${item.line} invalid`);
    const checked = checkEvent(mapRecord(format, item.record, map), 'file-identity', item.line);
    if (!checked.ok) throw new Error(`line ${item.line}: ${checked.reason}`);
    out.push(checked.event);
  }
  return out;
}

describe('source formats', () => {
  it('mixpanel: time in seconds or milliseconds, page views renamed, $insert_id kept as the id', async () => {
    const [view, purchase] = await eventsOf('mixpanel.jsonl', 'mixpanel');
    expect(view).toMatchObject({
      event: '$pageview',
      distinct_id: 'mp-user',
      timestamp: '2024-01-05T10:00:00.000Z',
      properties: { $current_url: 'https://x.io/', $insert_id: 'ins-1' },
    });
    expect(purchase).toMatchObject({ event: 'Purchase', timestamp: '2024-01-05T10:00:00.123Z', properties: { amount: 12 } });
    expect(purchase!.properties).not.toHaveProperty('time');
    expect(view!.uuid).not.toBe(purchase!.uuid);
  });

  it('amplitude: user id else device id, event time else client time, page views, user properties as $set', async () => {
    const [view, signup] = await eventsOf('amplitude.jsonl', 'amplitude');
    expect(view).toMatchObject({
      event: '$pageview',
      distinct_id: 'amp-user',
      timestamp: '2024-01-05T10:00:00.123Z',
      uuid: '5f0c6f8e-3c1a-4b7e-9d2f-1a2b3c4d5e6f',
      properties: { page: '/', $set: { plan: 'pro' }, $device_id: 'dev-1', $os: 'iOS' },
    });
    expect(signup).toMatchObject({ event: 'Signup', distinct_id: 'dev-2', timestamp: '2024-01-05T11:00:00.000Z' });
  });

  it('csv with --map: mapped columns become fields, the others properties', async () => {
    const [first, second] = await eventsOf('events.csv', 'csv', { event: 'action', distinct_id: 'user', timestamp: 'time' });
    expect(first).toMatchObject({ event: 'signup', distinct_id: 'u1', properties: { plan: 'pro', country: 'GB' } });
    expect(second).toMatchObject({ event: 'pageview', distinct_id: 'u,2', properties: { country: 'FR' } });
    expect(second!.properties).not.toHaveProperty('plan');
  });

  it('posthog exports: top-level $set and the uuid are kept', () => {
    const uuid = '0190a6f0-0000-7000-8000-0000000000aa';
    const checked = checkEvent(
      mapRecord(
        'posthog',
        { event: '$identify', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', uuid, properties: { a: 1 }, $set: { email: 'a@x.io' } },
        {},
      ),
      'id',
      1,
    );
    expect(checked).toEqual({
      ok: true,
      event: { event: '$identify', distinct_id: 'u', timestamp: '2024-01-01T00:00:00.000Z', uuid, properties: { a: 1, $set: { email: 'a@x.io' } } },
    });
  });

  it('jsonl with --map reads dotted paths', () => {
    const mapped = mapRecord(
      'jsonl',
      { type: 'click', user: { id: 'u9' }, at: '2024-01-01T00:00:00Z' },
      { event: 'type', distinct_id: 'user.id', timestamp: 'at' },
    );
    expect(mapped).toMatchObject({ event: 'click', distinct_id: 'u9', timestamp: '2024-01-01T00:00:00Z' });
  });

  it('reads gzip by its magic bytes whatever the file is called', async () => {
    const { gzipSync } = await import('node:zlib');
    const file = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'imp-')), 'events.data');
    fs.writeFileSync(file, gzipSync(fs.readFileSync(fixture('mixpanel.jsonl'))));
    const lines = [];
    for await (const item of readSource(file, 'jsonl')) lines.push(item.line);
    expect(lines).toEqual([1, 2]);
  });
});
