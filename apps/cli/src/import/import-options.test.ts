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
    [['a.jsonl', '--host', 'h', '--api-key', 'k', '--format', 'xml'], /--format/],
    [['a.jsonl', '--host', 'h', '--api-key', 'k', '--batch-bytes', '30000000'], /--batch-bytes/],
    [['a.jsonl', '--host', 'h', '--api-key', 'k', '--to', 'later'], /--to/],
    [['--host', 'h', '--api-key', 'k'], /FILE/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseImportArgs(argv, {})).toThrow(UsageError);
    expect(() => parseImportArgs(argv, {})).toThrow(message);
  });
  it('reads Retry-After in seconds or as a date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs(null)).toBeNull();
  });
});
