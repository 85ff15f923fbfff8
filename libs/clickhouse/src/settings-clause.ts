import type { ClickHouseSettings } from '@clickhouse/client';

/** What the client appends to every read's text (@clickhouse/client's formatQuery): ` \nFORMAT <format>`. */
const CLIENT_FORMAT = /\s\nFORMAT [A-Za-z]+$/;
/** A read's text the clause can follow: a SELECT (or WITH … SELECT), with no clause or comment of its own that could take it. */
const READ = /^\s*(SELECT|WITH)\b/i;
const UNSAFE = /\b(SETTINGS|FORMAT|INTO)\b|--|\/\*|#|;/i;
const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;
/** Settings of the HTTP interface only, which the in-process engine refuses (the chdb connection drops them too). */
const HTTP_ONLY = new Set(['wait_end_of_query']);

/** A setting's value as SQL: numbers as they are, booleans 1/0, text quoted (as the chdb connection writes its SETs). */
function settingValue(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return null;
}

/**
 * A read for the in-process engine with its settings in a SETTINGS clause of its own, or null
 * when the text cannot take one safely (then the settings go as SET statements, as before).
 * The embedded engine otherwise runs each setting as a SET statement of its own before the
 * query (about 60 µs each; a bounded read sends eleven), where a clause is parsed with the
 * query and applies to it alone, the whole of a UNION included. Only a plain SELECT or WITH
 * text qualifies: one with a SETTINGS, FORMAT or INTO of its own, a comment (which could
 * swallow the clause) or a ';' keeps the SETs, as does a setting of unknown shape.
 */
export function withSettingsClause(sql: string, settings: ClickHouseSettings | undefined): string | null {
  if (!settings) return null;
  const format = CLIENT_FORMAT.exec(sql);
  const text = format ? sql.slice(0, format.index) : sql;
  if (!READ.test(text) || UNSAFE.test(text)) return null;
  const assignments: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined || HTTP_ONLY.has(name)) continue;
    const written = settingValue(value);
    if (!SETTING_NAME.test(name) || written === null) return null;
    assignments.push(`${name} = ${written}`);
  }
  if (assignments.length === 0) return null;
  return `${text}\nSETTINGS ${assignments.join(', ')}${format ? format[0] : ''}`;
}
