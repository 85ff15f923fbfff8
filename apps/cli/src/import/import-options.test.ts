import { retryAfterMs } from './batch-sender';
import { parseImportArgs, UsageError } from './import-options';

describe('import options', () => {
  it('reads flags, with the environment standing in for host and key', () => {
    const options = parseImportArgs(
      ['a.jsonl', '-', '--format', 'csv', '--map', 'event=action', '--map', 'distinct_id=user.id', '--rate', '500', '--from', '2024-01-01'],
      {
        SIGHTLINE_HOST: 'http://localhost:8000',
        SIGHTLINE_PROJECT_API_KEY: 'phc_x',
      },
    );
    expect(options).toMatchObject({
      files: ['a.jsonl', '-'],
      host: 'http://localhost:8000',
      apiKey: 'phc_x',
      format: 'csv',
      map: { event: 'action', distinct_id: 'user.id' },
      rate: 500,
      fromMs: Date.parse('2024-01-01'),
    });
  });
  it.each([
    [['a.jsonl'], /--host/],
    [['a.jsonl', '--host', 'http://h', '--api-key', 'k', '--format', 'xml'], /--format/],
    [['a.jsonl', '--host', 'localhost:8000', '--api-key', 'k'], /--host must be a URL starting with http:\/\/ or https:\/\//],
    [['a.jsonl', '--host', 'sightline.example.com', '--api-key', 'k'], /--host must be a URL/],
    [['a.jsonl', '--host', 'http://h', '--api-key', 'k', '--timezone', 'Mars/Olympus'], /--timezone/],
    [['a.jsonl', '--host', 'http://h', '--api-key', 'k', '--to', '2024-12-3'], /--to/],
    [['a.jsonl', '--host', 'http://h', '--api-key', 'k', '--batch-bytes', '30000000'], /--batch-bytes/],
    [['a.jsonl', '--host', 'http://h', '--api-key', 'k', '--to', 'later'], /--to/],
    [['--host', 'http://h', '--api-key', 'k'], /FILE/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseImportArgs(argv, {})).toThrow(UsageError);
    expect(() => parseImportArgs(argv, {})).toThrow(message);
  });
  it('reads --from/--to in UTC, or in --timezone, a bare --to date to the end of its day', () => {
    const utc = parseImportArgs(['a.jsonl', '--dry-run', '--from', '2024-12-01', '--to', '2024-12-31'], {});
    expect([utc.fromMs, utc.toBeforeMs]).toEqual([Date.parse('2024-12-01T00:00:00Z'), Date.parse('2025-01-01T00:00:00Z')]);
    const berlin = parseImportArgs(['a.jsonl', '--dry-run', '--to', '2024-12-31', '--timezone', 'Europe/Berlin', '--format', 'mixpanel'], {});
    expect(berlin.toBeforeMs).toBe(Date.parse('2024-12-31T23:00:00Z'));
    expect(berlin.times).toEqual({ zone: 'Europe/Berlin', epochIsLocal: true });
  });

  it('reads Retry-After in seconds or as a date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs(null)).toBeNull();
  });
});
