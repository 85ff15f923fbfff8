import { loadMigrations, splitStatements } from './migrations';

describe('ClickHouse migrations', () => {
  const migrations = loadMigrations();

  // Each issue owns a number range (worker 0010–0019, …), so numbers may skip ahead.
  it('are numbered uniquely, in ascending order, from 1', () => {
    const versions = migrations.map((m) => m.version);
    expect(versions[0]).toBe(1);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
  });

  // No locks in ClickHouse: processes starting together may apply the same file twice.
  it('contain only idempotent statements', () => {
    for (const m of migrations) {
      for (const statement of m.statements) {
        const idempotent =
          /^CREATE (TABLE|DATABASE|VIEW|MATERIALIZED VIEW) IF NOT EXISTS/i.test(statement) ||
          /\bIF (NOT )?EXISTS\b/i.test(statement) ||
          /^ALTER TABLE \w+ MODIFY SETTING\b/i.test(statement);
        if (!idempotent) throw new Error(`${m.name}: not idempotent:\n${statement.slice(0, 200)}`);
      }
    }
  });

  it('split on semicolons at line ends, ignoring comment lines', () => {
    expect(splitStatements("-- a; comment\nSELECT 1;\nSELECT ';' ;\n")).toEqual(['SELECT 1', "SELECT ';'"]);
  });

  it('scope every table by team_id first, where it has one', () => {
    for (const m of migrations) {
      for (const statement of m.statements) {
        if (!/team_id/.test(statement)) continue;
        expect(statement).toMatch(/ORDER BY \(team_id\b/);
      }
    }
  });
});
