import { onClusterClause, SHARDED_TABLES, type ClickHouseLayout } from './layout';

/**
 * A migration statement as the cluster layout runs it (layout.ts): the migrations are written
 * once, for one server, and each statement is rewritten here, so both layouts apply the same
 * files. Only the shapes the migrations use are understood; any other statement is an error
 * naming it (a migration that needs a new shape extends this, with a test).
 *
 * - CREATE TABLE IF NOT EXISTS t (…) ENGINE = XMergeTree[(args)] …: `ON CLUSTER`, the engine
 *   made ReplicatedXMergeTree with PostHog's Keeper paths (posthog/clickhouse/table_engines.py):
 *   `/clickhouse/tables/noshard/{database}.t` with replica `{replica}-{shard}` for a table every
 *   node holds whole, `/clickhouse/tables/{shard}/{database}.sharded_t` with replica `{replica}`
 *   for a sharded one, which also gets its Distributed table under the plain name;
 * - ALTER TABLE t …: `ON CLUSTER`; on a sharded table column changes go to both the per-shard and
 *   the Distributed table, everything else (settings, indexes, TTL) to the per-shard one.
 *   `MODIFY SETTING non_replicated_deduplication_window` is left out: it turns on for one server
 *   what replicated tables always do (insert block ids kept in Keeper,
 *   replicated_deduplication_window).
 */
export function clusterStatements(statement: string, layout: ClickHouseLayout): string[] {
  if (layout.cluster === null) return [statement];
  const create = /^CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?=\()/i.exec(statement);
  if (create) return createTable(create[1]!, statement.slice(create[0].length), layout);
  const alter = /^ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)\s+/i.exec(statement);
  if (alter) return alterTable(alter[1]!, statement.slice(alter[0].length), layout);
  throw new Error(`no cluster form for this ClickHouse migration statement (clusterStatements): ${statement.slice(0, 120)}`);
}

const REPLICABLE_ENGINES = [
  'MergeTree',
  'ReplacingMergeTree',
  'SummingMergeTree',
  'AggregatingMergeTree',
  'CollapsingMergeTree',
  'VersionedCollapsingMergeTree',
];

function createTable(name: string, afterName: string, layout: ClickHouseLayout & { cluster: string }): string[] {
  const columnsEnd = closingParen(afterName, 0);
  const columns = afterName.slice(0, columnsEnd + 1);
  const rest = afterName.slice(columnsEnd + 1).trim();
  const engine = /^ENGINE\s*=\s*([A-Za-z]+)/.exec(rest);
  if (!engine || !REPLICABLE_ENGINES.includes(engine[1]!)) {
    throw new Error(`${name}: only ${REPLICABLE_ENGINES.join(', ')} tables have a cluster form, got: ${rest.slice(0, 60)}`);
  }
  let afterEngine = rest.slice(engine[0].length);
  let engineArgs = '';
  if (/^\s*\(/.test(afterEngine)) {
    const open = afterEngine.indexOf('(');
    const close = closingParen(afterEngine, open);
    engineArgs = afterEngine.slice(open + 1, close).trim();
    afterEngine = afterEngine.slice(close + 1);
  }
  const on = onClusterClause(layout);
  const sharded = SHARDED_TABLES[name];
  const replicated = (path: string, replica: string) =>
    `ENGINE = Replicated${engine[1]}('${path}', '${replica}'${engineArgs ? `, ${engineArgs}` : ''})${afterEngine}`;
  if (!sharded) {
    return [`CREATE TABLE IF NOT EXISTS ${name}${on}\n${columns}\n${replicated(`/clickhouse/tables/noshard/{database}.${name}`, '{replica}-{shard}')}`];
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${sharded.local}${on}\n${columns}\n${replicated(`/clickhouse/tables/{shard}/{database}.${sharded.local}`, '{replica}')}`,
    `CREATE TABLE IF NOT EXISTS ${name}${on}\n${columns}\nENGINE = Distributed('${layout.cluster}', '${layout.database}', '${sharded.local}', ${sharded.shardingKey})`,
  ];
}

const COLUMN_COMMAND = /^(ADD|DROP|MODIFY|RENAME|COMMENT|CLEAR)\s+COLUMN\b/i;
/** Settings that only mean something on a non-replicated MergeTree. */
const NON_REPLICATED_SETTINGS = ['non_replicated_deduplication_window'];

function alterTable(name: string, commandsText: string, layout: ClickHouseLayout & { cluster: string }): string[] {
  const commands = alterCommands(commandsText)
    .map(withoutNonReplicatedSettings)
    .filter((command): command is string => command !== null);
  if (commands.length === 0) return [];
  const on = onClusterClause(layout);
  const sharded = SHARDED_TABLES[name];
  const alter = (table: string, list: string[]) => `ALTER TABLE ${table}${on}\n    ${list.join(',\n    ')}`;
  if (!sharded) return [alter(name, commands)];
  const columnCommands = commands.filter((c) => COLUMN_COMMAND.test(c));
  return [alter(sharded.local, commands), ...(columnCommands.length > 0 ? [alter(name, columnCommands)] : [])];
}

const COMMAND_START =
  /^(ADD|DROP|MODIFY|RENAME|COMMENT|CLEAR|MATERIALIZE|UPDATE|DELETE|RESET|REMOVE|APPLY|FREEZE|UNFREEZE|ATTACH|DETACH|REPLACE|MOVE|FETCH)\b/i;

/** An ALTER's commands: its top-level comma-separated parts, a part that starts no command (`MODIFY SETTING a = 1, b = 2`) kept with the one before. */
function alterCommands(text: string): string[] {
  const commands: string[] = [];
  for (const part of splitTopLevel(text, ',').map((p) => p.trim())) {
    if (commands.length > 0 && !COMMAND_START.test(part)) commands[commands.length - 1] += `, ${part}`;
    else commands.push(part);
  }
  return commands;
}

/** The command without the settings a replicated table has no use for; null when none is left. */
function withoutNonReplicatedSettings(command: string): string | null {
  const modify = /^MODIFY\s+SETTING\s+/i.exec(command);
  if (!modify) return command;
  const kept = splitTopLevel(command.slice(modify[0].length), ',')
    .map((s) => s.trim())
    .filter((s) => !NON_REPLICATED_SETTINGS.includes(s.split('=')[0]!.trim()));
  return kept.length === 0 ? null : `MODIFY SETTING ${kept.join(', ')}`;
}

/** Index of the `)` closing the `(` at `open`, skipping quoted text. */
function closingParen(text: string, open: number): number {
  if (text[open] !== '(') throw new Error(`expected ( at ${open}: ${text.slice(open, open + 40)}`);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '`' || c === '"') i = quotedEnd(text, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new Error(`unbalanced parentheses: ${text.slice(open, open + 60)}`);
}

/** Index of the quote closing the one at `start` (backslash escapes and doubled quotes). */
function quotedEnd(text: string, start: number): number {
  const quote = text[start]!;
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) {
      if (text[i + 1] === quote) i++;
      else return i;
    }
  }
  throw new Error(`unterminated quote: ${text.slice(start, start + 40)}`);
}

/** `text` split at `separator`s outside parentheses and quotes. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '`' || c === '"') i = quotedEnd(text, i);
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((p) => p.trim() !== '');
}
