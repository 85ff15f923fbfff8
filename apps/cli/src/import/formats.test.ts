import fs from 'node:fs';
import path from 'node:path';
import { checkEvent, type CheckContext } from './event-check';
import { createRecordMapper, type FieldMap, type Format } from './formats';
import { readSource } from './source-reader';
import { UTC_TIMES } from './source-time';

const context: CheckContext = { times: UTC_TIMES, apiKey: 'phc_test', nowMs: Date.parse('2025-06-01T00:00:00Z') };

const fixture = (name: string) => path.join(__dirname, '..', '..', 'test-fixtures', name);

async function eventsOf(file: string, format: Format, map: FieldMap = {}) {
  const out = [];
  const mapRecord = createRecordMapper(format, map);
  for await (const item of readSource(fixture(file), format === 'csv' ? 'csv' : 'jsonl')) {
    if ('invalid' in item) throw new Error(`line ${item.line} invalid`);
    for (const mapped of mapRecord(item.record)) {
      const checked = checkEvent(mapped, () => JSON.stringify(item.record), context);
      if (!checked.ok) throw new Error(`line ${item.line}: ${checked.reason}`);
      out.push(checked.event);
    }
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
    const [view, , signup] = await eventsOf('amplitude.jsonl', 'amplitude');
    expect(view).toMatchObject({
      event: '$pageview',
      distinct_id: 'amp-user',
      timestamp: '2024-01-05T10:00:00.123456Z',
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
    const [mapped] = createRecordMapper(
      'posthog',
      {},
    )({
      event: '$identify',
      distinct_id: 'u',
      timestamp: '2024-01-01T00:00:00Z',
      uuid,
      properties: { a: 1 },
      $set: { email: 'a@x.io' },
    });
    expect(checkEvent(mapped!, () => '', context)).toMatchObject({
      ok: true,
      event: {
        event: '$identify',
        distinct_id: 'u',
        timestamp: '2024-01-01T00:00:00.000Z',
        uuid,
        properties: { a: 1, $set: { email: 'a@x.io' }, $geoip_disable: true },
      },
    });
  });

  it('jsonl with --map reads dotted paths', () => {
    const [mapped] = createRecordMapper('jsonl', { event: 'type', distinct_id: 'user.id', timestamp: 'at' })({
      type: 'click',
      user: { id: 'u9' },
      at: '2024-01-01T00:00:00Z',
    });
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

  it('mixpanel: time as text in milliseconds (older exports) is read as milliseconds', () => {
    const [mapped] = createRecordMapper('mixpanel', {})({ event: 'Buy', properties: { time: '1704448800123', distinct_id: 'u', $insert_id: 'i' } });
    expect(checkEvent(mapped!, () => '', context)).toMatchObject({ ok: true, event: { timestamp: '2024-01-05T10:00:00.123Z' } });
  });

  it('amplitude: session, platform, device and country fields are kept; groups become $groups and $groupidentify', () => {
    const mapRecord = createRecordMapper('amplitude', {});
    const record = {
      event_type: 'Checkout',
      user_id: 'user-1',
      device_id: 'device-1',
      event_time: '2024-01-05 10:00:00.000000',
      session_id: 1704448700000,
      platform: 'iOS',
      os_name: 'ios',
      os_version: '17.2',
      device_brand: 'Apple',
      device_manufacturer: 'Apple',
      device_model: 'iPhone 15',
      device_type: 'Apple iPhone 15',
      country: 'Germany',
      city: 'Berlin',
      amplitude_id: 123,
      groups: { company: ['acme'] },
      group_properties: { company: { acme: { plan: 'enterprise' } } },
      event_properties: { total: 30 },
      user_properties: { plan: 'pro' },
    };
    const [event, alias, group] = mapRecord(record);
    expect(event).toMatchObject({
      event: 'Checkout',
      distinct_id: 'user-1',
      $set: { plan: 'pro' },
      properties: {
        total: 30,
        $session_id: '1704448700000',
        platform: 'iOS',
        $os: 'ios',
        $os_version: '17.2',
        device_brand: 'Apple',
        $device_manufacturer: 'Apple',
        $device_model: 'iPhone 15',
        $device_type: 'Apple iPhone 15',
        $device_id: 'device-1',
        $geoip_country_name: 'Germany',
        $geoip_city_name: 'Berlin',
        $groups: { company: 'acme' },
        $geoip_disable: true,
      },
    });
    // As PostHog's Amplitude guide does: the device is aliased to the user, once.
    expect(alias).toMatchObject({ event: '$create_alias', distinct_id: 'device-1', properties: { alias: 'user-1' } });
    expect(group).toMatchObject({ event: '$groupidentify', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'enterprise' } } });
    // The same pair and the same group properties imply events with the same ids (the run sends each once).
    const [, sameAlias, sameGroup] = mapRecord({ ...record, event_type: 'Other', event_time: '2024-01-06 10:00:00' });
    expect([sameAlias!.sourceId, sameGroup!.sourceId]).toEqual([alias!.sourceId, group!.sourceId]);
    const [, , changedGroup] = mapRecord({ ...record, group_properties: { company: { acme: { plan: 'free' } } } });
    expect(changedGroup!.sourceId).not.toBe(group!.sourceId);
    expect(mapRecord({ ...record, session_id: -1, user_id: null })[0]!.properties).not.toHaveProperty('$session_id');
  });

  it('posthog batch exports: elements_chain, person_properties, set/set_once and ip are kept', () => {
    const [mapped] = createRecordMapper(
      'posthog',
      {},
    )({
      uuid: '0190a6f0-0000-7000-8000-0000000000ab',
      event: '$autocapture',
      distinct_id: 'u',
      timestamp: '2024-01-05 10:00:00.123456',
      properties: JSON.stringify({ $event_type: 'click' }),
      elements_chain: 'button.buy:nth-child="1"text="Buy"',
      person_properties: JSON.stringify({ email: 'a@x.io', plan: 'pro' }),
      set: { plan: 'team' },
      set_once: { first: 'yes' },
      ip: '203.0.113.9',
      team_id: 1,
    });
    const checked = checkEvent(mapped!, () => '', context);
    expect(checked).toMatchObject({
      ok: true,
      event: {
        timestamp: '2024-01-05T10:00:00.123456Z',
        properties: {
          $event_type: 'click',
          $elements_chain: 'button.buy:nth-child="1"text="Buy"',
          $ip: '203.0.113.9',
          $set: { email: 'a@x.io', plan: 'team' },
          $set_once: { first: 'yes' },
        },
      },
    });
    expect(checked.ok && checked.event.properties).not.toHaveProperty('$geoip_disable');
  });

  it('no source address: no $ip is invented and GeoIP is off', () => {
    const [mapped] = createRecordMapper('posthog', {})({ event: 'e', distinct_id: 'u', timestamp: '2024-01-05T10:00:00Z' });
    expect(mapped!.properties).toEqual({ $geoip_disable: true });
  });

  it('JSON lines with a byte-order mark keep their first line', async () => {
    const file = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'imp-')), 'bom.jsonl');
    fs.writeFileSync(file, `\ufeff${fs.readFileSync(fixture('mixpanel.jsonl'), 'utf8')}`);
    const items = [];
    for await (const item of readSource(file, 'jsonl')) items.push(item);
    expect(items.map((i) => ('record' in i ? i.line : `invalid ${i.line}`))).toEqual([1, 2]);
  });

  it('CSV records are numbered by the line they start on, quoted line breaks counted', async () => {
    const file = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'imp-')), 'multi.csv');
    fs.writeFileSync(file, 'event,distinct_id,note\na,u1,"two\nlines"\n\nb,u2,plain\nc,u3,"three\n\nlines"\nd,u4,last\n');
    const lines = [];
    for await (const item of readSource(file, 'csv')) lines.push(item.line);
    expect(lines).toEqual([2, 5, 6, 9]);
  });

  it('reads a zip of gzipped JSON lines (Amplitude export) as downloaded, entry by entry in name order', async () => {
    const { ZipFile } = await import('yazl');
    const { gzipSync } = await import('node:zlib');
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'imp-'));
    const file = path.join(dir, 'export.zip');
    const zip = new ZipFile();
    const line = (n: number) => JSON.stringify({ event_type: `e${n}`, device_id: 'd', event_time: '2024-01-05 10:00:00' });
    zip.addBuffer(gzipSync(`${line(3)}\n`), '123/123_2024-01-05_11#0.json.gz');
    zip.addBuffer(gzipSync(`${line(1)}\n${line(2)}\n`), '123/123_2024-01-05_10#0.json.gz');
    zip.addEmptyDirectory('123/');
    await new Promise<void>((resolve, reject) => {
      zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject);
      zip.end();
    });
    const items = [];
    for await (const item of readSource(file, 'jsonl')) items.push(item);
    expect(items.map((i) => ('record' in i ? [i.record['event_type'], i.line, i.where] : null))).toEqual([
      ['e1', 1, { file: `${file}:123/123_2024-01-05_10#0.json.gz`, line: 1 }],
      ['e2', 2, { file: `${file}:123/123_2024-01-05_10#0.json.gz`, line: 2 }],
      ['e3', 3, { file: `${file}:123/123_2024-01-05_11#0.json.gz`, line: 1 }],
    ]);
  });
});
