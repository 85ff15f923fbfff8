import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

type Result = { testFilePath: string; displayName?: string | { name: string }; perfStats: { start: number; end: number } };
const { slowestFilesReport, withCarried } = require('./slowest-files-reporter.cjs') as {
  withCarried: (results: Result[], carryFile: string | undefined) => Result[];
  slowestFilesReport: (
    results: { testFilePath: string; displayName?: string | { name: string }; perfStats: { start: number; end: number } }[],
    rootDir: string,
    count?: number,
  ) => string[];
};

const root = '/repo';
const result = (file: string, project: string, seconds: number) => ({
  testFilePath: path.join(root, file),
  displayName: { name: project },
  perfStats: { start: 1_000, end: 1_000 + seconds * 1000 },
});

describe('slowest test files report', () => {
  it('lists the slowest files first, with their project and seconds, up to the count', () => {
    const lines = slowestFilesReport(
      [
        result('a.test.ts', 'unit', 0.2),
        result('test/b.slow.test.ts', 'slow', 94.4),
        result('c.int.test.ts', 'integration', 12),
        result('d.e2e.test.ts', 'e2e', 3),
      ],
      root,
      3,
    );
    expect(lines).toEqual([
      'Slowest test files (3 of 4; all files took 109.6 s):',
      '    94.4 s  slow         test/b.slow.test.ts',
      '    12.0 s  integration  c.int.test.ts',
      '     3.0 s  e2e          d.e2e.test.ts',
    ]);
  });

  it('prints nothing when no file ran', () => {
    expect(slowestFilesReport([], root)).toEqual([]);
  });

  it('lists the files of every run that shares a carry file, the last run printing them all', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'slowest-'));
    try {
      const carry = path.join(dir, 'carry.json');
      expect(withCarried([result('a.int.test.ts', 'integration', 5)], carry)).toHaveLength(1);
      const all = withCarried([result('b.slow.test.ts', 'slow', 50)], carry);
      expect(slowestFilesReport(all, root)).toEqual([
        'Slowest test files (2 of 2; all files took 55.0 s):',
        '    50.0 s  slow         b.slow.test.ts',
        '     5.0 s  integration  a.int.test.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps to its own run without a carry file', () => {
    const only = [result('a.test.ts', 'unit', 1)];
    expect(withCarried(only, undefined)).toBe(only);
  });
});
