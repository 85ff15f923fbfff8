import { readSourceTime, readTimeBound, UTC_TIMES } from './source-time';

// The importing machine's zone must not matter: these run with the process in Berlin time.
const machineZone = process.env['TZ'];
beforeAll(() => {
  process.env['TZ'] = 'Europe/Berlin';
});
afterAll(() => {
  if (machineZone === undefined) delete process.env['TZ'];
  else process.env['TZ'] = machineZone;
});

const iso = (value: unknown, settings = UTC_TIMES) => {
  const read = readSourceTime(value, settings);
  return read.ok ? read.iso : read.reason;
};

describe('source timestamps', () => {
  it('reads times without a zone as UTC, whatever the machine zone', () => {
    expect(iso('2024-07-01 10:00:00')).toBe('2024-07-01T10:00:00.000Z');
    expect(iso('2024-07-01T10:00:00')).toBe('2024-07-01T10:00:00.000Z');
    expect(iso('2024-01-05T23:30:00')).toBe('2024-01-05T23:30:00.000Z');
    expect(iso('2024-07-01')).toBe('2024-07-01T00:00:00.000Z');
  });

  it('reads them in --timezone when the source wrote local time, daylight saving included', () => {
    const berlin = { zone: 'Europe/Berlin', epochIsLocal: false };
    expect(iso('2024-07-01 10:00:00', berlin)).toBe('2024-07-01T08:00:00.000Z');
    expect(iso('2024-01-05 10:00:00', berlin)).toBe('2024-01-05T09:00:00.000Z');
    // A zone in the text wins over --timezone.
    expect(iso('2024-07-01T10:00:00Z', berlin)).toBe('2024-07-01T10:00:00.000Z');
    // Epoch numbers are absolute unless the source counts them in local time (older Mixpanel projects).
    expect(iso(1719828000, berlin)).toBe('2024-07-01T10:00:00.000Z');
    expect(iso(1719828000, { zone: 'Europe/Berlin', epochIsLocal: true })).toBe('2024-07-01T08:00:00.000Z');
  });

  it('accepts +05, +0530 and +05:30 offsets, and keeps microseconds', () => {
    expect(iso('2024-07-01T10:00:00+05')).toBe('2024-07-01T05:00:00.000Z');
    expect(iso('2024-07-01T10:00:00+0530')).toBe('2024-07-01T04:30:00.000Z');
    expect(iso('2024-07-01T10:00:00-05:30')).toBe('2024-07-01T15:30:00.000Z');
    expect(iso('2024-01-05 10:00:00.123456')).toBe('2024-01-05T10:00:00.123456Z');
    expect(iso('2024-01-05T10:00:00.123456789Z')).toBe('2024-01-05T10:00:00.123456Z');
    expect(iso('2024-01-05T10:00:00.5Z')).toBe('2024-01-05T10:00:00.500Z');
  });

  it('reads epochs by their size, as numbers or text: seconds, milliseconds, microseconds, nanoseconds', () => {
    expect(iso(1704448800)).toBe('2024-01-05T10:00:00.000Z');
    expect(iso('1704448800')).toBe('2024-01-05T10:00:00.000Z');
    // Mixpanel's `time` as text in milliseconds (was read as seconds: year 55720).
    expect(iso('1704448800123')).toBe('2024-01-05T10:00:00.123Z');
    expect(iso(1704448800.5)).toBe('2024-01-05T10:00:00.500Z');
    expect(readSourceTime(1704448800123456)).toEqual({ ok: true, iso: '2024-01-05T10:00:00.123456Z', ms: 1704448800123, conversion: 'epoch_microseconds' });
    expect(readSourceTime('1704448800123456789')).toMatchObject({ ok: true, iso: '2024-01-05T10:00:00.123456Z', conversion: 'epoch_nanoseconds' });
  });

  it('reads 20240503 as a date, not as seconds of 1970', () => {
    expect(readSourceTime('20240503')).toEqual({
      ok: true,
      iso: '2024-05-03T00:00:00.000Z',
      ms: Date.parse('2024-05-03T00:00:00Z'),
      conversion: 'compact_date',
    });
    expect(iso(20240503)).toBe('2024-05-03T00:00:00.000Z');
  });

  it.each(['2024-12-3', '2024-02-30', '2024-13-01T00:00:00Z', '12/03/2024', 'Tue Dec 03 2024 10:00:00', 'yesterday', '2024-07-01T25:00:00Z', true, {}])(
    'refuses %j rather than guess',
    (value) => {
      expect(readSourceTime(value)).toEqual({ ok: false, reason: 'invalid_timestamp' });
    },
  );

  it('reads RFC 2822 dates that carry their zone', () => {
    expect(iso('Fri, 05 Jan 2024 10:00:00 GMT')).toBe('2024-01-05T10:00:00.000Z');
    expect(iso('Fri, 05 Jan 2024 10:00:00 +0100')).toBe('2024-01-05T09:00:00.000Z');
  });
});

describe('--from and --to', () => {
  it('a bare --to date keeps its whole day; a time is inclusive', () => {
    expect(readTimeBound('2024-12-31', UTC_TIMES, 'to')).toBe(Date.parse('2025-01-01T00:00:00Z'));
    expect(readTimeBound('2024-12-31T12:00:00Z', UTC_TIMES, 'to')).toBe(Date.parse('2024-12-31T12:00:00Z') + 1);
    expect(readTimeBound('2024-12-31', UTC_TIMES, 'from')).toBe(Date.parse('2024-12-31T00:00:00Z'));
  });

  it('are read in UTC, or in --timezone, never in the machine zone', () => {
    expect(readTimeBound('2024-12-31 10:00', UTC_TIMES, 'from')).toBe(Date.parse('2024-12-31T10:00:00Z'));
    const tokyo = { zone: 'Asia/Tokyo', epochIsLocal: false };
    expect(readTimeBound('2024-12-31', tokyo, 'from')).toBe(Date.parse('2024-12-30T15:00:00Z'));
    expect(readTimeBound('2024-12-31', tokyo, 'to')).toBe(Date.parse('2024-12-31T15:00:00Z'));
    expect(readTimeBound('later', UTC_TIMES, 'to')).toBeNull();
  });
});
