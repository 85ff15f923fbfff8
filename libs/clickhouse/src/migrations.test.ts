import { loadMigrations, splitStatements } from './migrations';

describe('ClickHouse migrations', () => {
  const migrations = loadMigrations();

  it('are numbered without gaps from 1', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });

  // No locks in ClickHouse: processes starting together may apply the same file twice.
  it('contain only idempotent statements', () => {
    for (const m of migrations) {
      for (const statement of m.statements) {
        const idempotent = /^CREATE (TABLE|DATABASE|VIEW|MATERIALIZED VIEW) IF NOT EXISTS/i.test(statement) || /\bIF (NOT )?EXISTS\b/i.test(statement);
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
