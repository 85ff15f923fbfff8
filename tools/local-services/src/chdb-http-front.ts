/**
 * A ClickHouse HTTP interface over chdb (in-process ClickHouse), for the tests and the local
 * cluster (`npm run start:cluster` without CLICKHOUSE_URL): not a production server.
 *
 * It speaks just enough of the ClickHouse HTTP protocol for `@clickhouse/client`
 * to work unchanged against it: `GET /ping`, queries from the `query` URL
 * parameter and/or the body, INSERT data in the body, `param_*` bindings, the
 * `database` parameter, ClickHouse settings as URL parameters, gzip/deflate/br
 * request and response compression, and ClickHouse-shaped errors.
 *
 * Run it as its own process (libchdb binds one data directory per process):
 *   node --import tsx tools/local-services/src/chdb-http-front.ts --data-dir DIR --port PORT
 * (or CHDB_FRONT_DATA_DIR / CHDB_FRONT_PORT). It prints `listening <port>` once ready.
 *
 * Every request runs through one queue on one chdb connection, because HTTP
 * requests are stateless but a chdb connection is not: the current database
 * (`USE`) and `SET` settings stick to the connection, so each request sets its
 * database, applies its settings and restores them before the next one starts.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Session } from 'chdb';

/** Raw result of the native addon's async query: output bytes plus metrics. */
interface NativeQueryResult {
  bytes: Uint8Array;
  elapsed: number;
  rowsRead: number;
  bytesRead: number;
}

/** Raw result of the native addon's pass-through insert. */
interface NativeInsertResult {
  elapsed: number;
  rowsWritten: number;
  bytesWritten: number;
}

/**
 * The two native addon entry points this front needs, called directly rather
 * than through `Session`'s wrappers:
 * - `Session.queryBindAsync` re-formats parameter values from JS values, but an
 *   HTTP client sends them already formatted (TSV-escaped, arrays as `['it\'s']`);
 *   re-escaping would double every backslash. The addon binds raw strings as is.
 * - `Session.insert` only accepts whitelisted text formats and plain identifiers;
 *   the client's own INSERT statement (RowBinary, SETTINGS, column lists) must
 *   pass through untouched.
 */
interface ChdbNative {
  QueryAsyncConnection(connection: unknown, sql: string, format: string, params?: Record<string, string>): Promise<NativeQueryResult>;
  InsertRawAsyncConnection(connection: unknown, insertStatement: string, data: Buffer, countLines: boolean): Promise<NativeInsertResult>;
}

function loadChdbNative(): ChdbNative {
  // The package's `exports` map hides dist/, so resolve the loader by path. It
  // caches the addon, so this is the same instance the Session uses.
  const loaderPath = path.join(path.dirname(require.resolve('chdb')), 'dist', 'loader.js');
  const loader = require(loaderPath) as { loadNative(): ChdbNative };
  return loader.loadNative();
}

/**
 * URL parameters that belong to the HTTP handler (or that this front does not
 * emulate), never applied as engine settings. `readonly` is skipped because a
 * read-only connection could not restore the settings afterwards.
 */
const HTTP_HANDLER_PARAMS = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'user',
  'password',
  'quota_key',
  'role',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'stacktrace',
  'client_protocol_version',
  'readonly',
  'enable_http_compression',
  'http_zlib_compression_level',
  'http_native_compression_disable_checksumming_on_decompress',
  'http_response_buffer_size',
  'http_headers_progress_interval_ms',
  'http_send_progress_interval_ms',
  'send_progress_in_http_headers',
  'add_http_cors_header',
  'cancel_http_readonly_queries_on_client_close',
]);

/** ClickHouse error codes used by the front itself. */
const ErrorCode = {
  SYNTAX_ERROR: 62,
  UNKNOWN_DATABASE: 81,
  NO_DATA_TO_INSERT: 108,
  STD_EXCEPTION: 1001,
} as const;

/** An error to answer with, shaped like the ClickHouse server's. */
class ClickHouseHttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = httpStatusForCode(code),
  ) {
    super(message);
  }

  /** Wraps an error thrown by chdb, whose message is already `Code: N. DB::Exception: … (TYPE)`. */
  static fromEngine(err: unknown): ClickHouseHttpError {
    const message = err instanceof Error ? err.message : String(err);
    const match = /Code: (\d+)\./.exec(message);
    if (match) return new ClickHouseHttpError(Number(match[1]), message);
    return new ClickHouseHttpError(ErrorCode.STD_EXCEPTION, `Code: ${ErrorCode.STD_EXCEPTION}. DB::Exception: ${message}. (STD_EXCEPTION)`);
  }
}

/** The HTTP status ClickHouse answers with for a given exception code. */
function httpStatusForCode(code: number): number {
  switch (code) {
    case 60: // UNKNOWN_TABLE
    case 81: // UNKNOWN_DATABASE
      return 404;
    case 27: // CANNOT_PARSE_INPUT_ASSERTION_FAILED
    case 36: // BAD_ARGUMENTS
    case 62: // SYNTAX_ERROR
    case 115: // UNKNOWN_SETTING
    case 456: // UNKNOWN_QUERY_PARAMETER
    case 457: // BAD_QUERY_PARAMETER
      return 400;
    default:
      return 500;
  }
}

/** One HTTP request, decoded into what the engine needs. */
interface ChRequest {
  /** SQL text; for an INSERT with data, the statement only. */
  sql: string;
  /** INSERT payload (body bytes), when the statement came in the URL. */
  insertData?: Buffer;
  database: string;
  /** Raw `param_*` values, exactly as the client formatted them. */
  params: Record<string, string>;
  /** Engine settings from URL parameters. */
  settings: Record<string, string>;
  /** Output format for a query without a FORMAT clause. */
  defaultFormat: string;
}

interface ChResponse {
  body: Uint8Array;
  format: string;
  summary: Record<string, string>;
}

const quoteIdentifier = (name: string) => '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
const quoteString = (value: string) => "'" + value.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";

/** True when the statement is an INSERT (comments and a leading WITH are not expected here). */
const isInsert = (sql: string) => /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*insert\b/i.test(sql);

/** The FORMAT named at the end of a query, if any. */
const trailingFormat = (sql: string) => /\bFORMAT\s+([A-Za-z0-9_]+)\s*(?:SETTINGS\b[^;]*)?;?\s*$/i.exec(sql)?.[1];

/**
 * Binary input formats. chdb reads an insert's body as text that follows the statement, and
 * stops at the first empty line: binary data holding two newline bytes in a row (an Int64 of
 * 2570, a string with a blank line) lost every row after them, silently. Such a body is read
 * from a file instead (INSERT … FROM INFILE), which chdb reads to the end.
 */
const isBinaryFormat = (format: string | undefined) => format !== undefined && /^(RowBinary\w*|Native|Parquet|Arrow\w*|ORC|Avro)$/i.test(format);

/** The chdb engine behind one connection, used by one request at a time. */
class ChdbEngine {
  private readonly session: Session;
  private readonly native = loadChdbNative();
  private queueTail: Promise<unknown> = Promise.resolve();
  private readonly bodiesDir: string;

  constructor(dataDir: string) {
    this.bodiesDir = path.join(dataDir, 'insert-bodies');
    fs.mkdirSync(this.bodiesDir, { recursive: true });
    this.session = new Session(dataDir);
    // chdb (clickhouse-local) accepts a bare expression as a query; a server does not.
    this.queueTail = this.run('SET implicit_select = 0');
  }

  /** Runs requests strictly one after another (see the file comment). */
  execute(request: ChRequest): Promise<ChResponse> {
    const result = this.queueTail.then(() => this.executeNow(request));
    this.queueTail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every queued request has finished. */
  async drain(): Promise<void> {
    await this.queueTail;
  }

  close(): void {
    this.session.close();
  }

  private async executeNow(request: ChRequest): Promise<ChResponse> {
    // Also reads out what a statement that failed mid-stream left in the engine's output, which
    // chdb would otherwise put in front of this request's answer (chdb-http-front.int.test.ts).
    await this.run(`USE ${quoteIdentifier(request.database)}`);
    // An insert with a body names its settings in its own statement, as a server applies URL
    // settings to that one query: no SET before and after it (three more engine calls per
    // insert, each with chdb's fixed cost, that a ClickHouse server does not make). A statement
    // with its own SETTINGS clause keeps the SET path (two clauses would not parse).
    const format = trailingFormat(request.sql);
    if (request.insertData && Object.keys(request.params).length === 0 && format !== undefined && !/\bSETTINGS\b/i.test(request.sql)) {
      if (isBinaryFormat(format)) return this.insertFromFile(request.sql, request.insertData, request.settings);
      return this.insertWithSettings(request.sql, format, request.insertData, request.settings);
    }
    const restoreSettings = await this.applySettings(request.settings);
    try {
      return await this.runRequest(request);
    } finally {
      if (restoreSettings) await this.run(restoreSettings);
    }
  }

  private async runRequest(request: ChRequest): Promise<ChResponse> {
    const format = trailingFormat(request.sql) ?? request.defaultFormat;
    const hasParams = Object.keys(request.params).length > 0;
    if (request.insertData && !hasParams) {
      const inserted = await this.guard(this.native.InsertRawAsyncConnection(this.session.connection, request.sql, request.insertData, false));
      return {
        body: new Uint8Array(0),
        format,
        summary: summary({ written_rows: inserted.rowsWritten, written_bytes: inserted.bytesWritten, elapsed: inserted.elapsed }),
      };
    }
    const sql = request.insertData ? `${request.sql}\n${request.insertData.toString('utf8')}` : request.sql;
    try {
      const result = await this.run(sql, format, hasParams ? request.params : undefined);
      const counts = isInsert(sql)
        ? { written_rows: result.rowsRead, written_bytes: result.bytesRead }
        : { read_rows: result.rowsRead, read_bytes: result.bytesRead, result_rows: result.rowsRead, result_bytes: result.bytesRead };
      return { body: result.bytes, format, summary: summary({ ...counts, elapsed: result.elapsed }) };
    } catch (err) {
      // The server accepts an INSERT with an empty body as a no-op; chdb refuses it.
      if (err instanceof ClickHouseHttpError && err.code === ErrorCode.NO_DATA_TO_INSERT && isInsert(sql)) {
        return { body: new Uint8Array(0), format, summary: summary({}) };
      }
      throw err;
    }
  }

  /** A text insert body passed through as is, with the request's settings in the statement. */
  private async insertWithSettings(statement: string, format: string, data: Buffer, settings: Record<string, string>): Promise<ChResponse> {
    const settingsClause = settingsClauseOf(settings);
    const sql = statement.replace(/\bFORMAT\s+(\w+)\s*;?\s*$/i, (clause) => `${settingsClause}${clause}`);
    const inserted = await this.guard(this.native.InsertRawAsyncConnection(this.session.connection, sql, data, false));
    return {
      body: new Uint8Array(0),
      format,
      summary: summary({ written_rows: inserted.rowsWritten, written_bytes: inserted.bytesWritten, elapsed: inserted.elapsed }),
    };
  }

  /** A binary insert body, written to a file that the statement reads (see isBinaryFormat), with the request's settings in the statement. */
  private async insertFromFile(statement: string, data: Buffer, settings: Record<string, string>): Promise<ChResponse> {
    const settingsClause = settingsClauseOf(settings);
    const format = trailingFormat(statement)!;
    const file = path.join(this.bodiesDir, `${randomUUID()}.bin`);
    await fs.promises.writeFile(file, data);
    try {
      const sql = statement.replace(/\bFORMAT\s+(\w+)\s*;?\s*$/i, (clause) => `FROM INFILE ${quoteString(file)} ${settingsClause}${clause}`);
      const result = await this.run(sql);
      return { body: new Uint8Array(0), format, summary: summary({ written_rows: result.rowsRead, written_bytes: data.length, elapsed: result.elapsed }) };
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  /** Applies settings with SET; returns the SET statement that restores the previous values. */
  private async applySettings(settings: Record<string, string>): Promise<string | undefined> {
    const names = Object.keys(settings);
    if (names.length === 0) return undefined;
    for (const name of names) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new ClickHouseHttpError(115, `Code: 115. DB::Exception: Unknown setting '${name}'. (UNKNOWN_SETTING)`);
      }
    }
    const current = await this.run(`SELECT name, value FROM system.settings WHERE name IN (${names.map(quoteString).join(', ')})`, 'JSONEachRow');
    const previous = Buffer.from(current.bytes)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { name: string; value: string });
    // An unknown name fails here with UNKNOWN_SETTING, as on a real server.
    await this.run(`SET ${names.map((name) => `${name} = ${quoteString(settings[name])}`).join(', ')}`);
    return previous.length > 0 ? `SET ${previous.map((s) => `${s.name} = ${quoteString(s.value)}`).join(', ')}` : undefined;
  }

  private run(sql: string, format = 'TabSeparated', params?: Record<string, string>): Promise<NativeQueryResult> {
    return this.guard(this.native.QueryAsyncConnection(this.session.connection, sql, format, params));
  }

  private async guard<T>(operation: Promise<T>): Promise<T> {
    try {
      return await operation;
    } catch (err) {
      throw ClickHouseHttpError.fromEngine(err);
    }
  }
}

/** `SETTINGS a = 'x', … ` for an insert statement (empty without settings); refuses names that are not identifiers. */
function settingsClauseOf(settings: Record<string, string>): string {
  const names = Object.keys(settings);
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ClickHouseHttpError(115, `Code: 115. DB::Exception: Unknown setting '${name}'. (UNKNOWN_SETTING)`);
  }
  return names.length > 0 ? `SETTINGS ${names.map((name) => `${name} = ${quoteString(settings[name]!)}`).join(', ')} ` : '';
}

/** An X-ClickHouse-Summary header value: every counter as a decimal string. */
function summary(counts: {
  read_rows?: number;
  read_bytes?: number;
  written_rows?: number;
  written_bytes?: number;
  result_rows?: number;
  result_bytes?: number;
  elapsed?: number;
}): Record<string, string> {
  const n = (v: number | undefined) => String(v ?? 0);
  return {
    read_rows: n(counts.read_rows),
    read_bytes: n(counts.read_bytes),
    written_rows: n(counts.written_rows),
    written_bytes: n(counts.written_bytes),
    total_rows_to_read: '0',
    result_rows: n(counts.result_rows),
    result_bytes: n(counts.result_bytes),
    elapsed_ns: String(Math.round((counts.elapsed ?? 0) * 1e9)),
  };
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === '' || encoding === 'identity' || body.length === 0) return body;
  if (encoding === 'gzip') return promisify(zlib.gunzip)(body);
  if (encoding === 'deflate') return promisify(zlib.inflate)(body);
  if (encoding === 'br') return promisify(zlib.brotliDecompress)(body);
  throw new ClickHouseHttpError(ErrorCode.STD_EXCEPTION, `Code: 1001. DB::Exception: Unknown HTTP content encoding '${encoding}'. (STD_EXCEPTION)`, 400);
}

/** Fields of a multipart/form-data body (the client's `use_multipart_params` mode). */
function parseMultipart(body: Buffer, contentType: string): Map<string, string> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const fields = new Map<string, string>();
  if (!boundary) return fields;
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  for (const part of body.toString('utf8').split(delimiter)) {
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const name = /name="([^"]*)"/i.exec(part.slice(0, headerEnd))?.[1];
    if (name === undefined) continue;
    fields.set(name, part.slice(headerEnd + 4).replace(/\r\n$/, ''));
  }
  return fields;
}

/** Decodes a request the way the ClickHouse HTTP handler does. */
async function decodeRequest(req: http.IncomingMessage, url: URL): Promise<ChRequest> {
  let body = await readBody(req);
  const fields = new Map<string, string>(url.searchParams);
  const contentType = req.headers['content-type'] ?? '';
  if (contentType.toLowerCase().startsWith('multipart/form-data')) {
    for (const [name, value] of parseMultipart(body, contentType)) fields.set(name, value);
    body = Buffer.alloc(0);
  }

  const params: Record<string, string> = {};
  const settings: Record<string, string> = {};
  for (const [name, value] of fields) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = value;
    else if (!HTTP_HANDLER_PARAMS.has(name)) settings[name] = value;
  }

  const urlQuery = fields.get('query') ?? '';
  let sql: string;
  let insertData: Buffer | undefined;
  if (urlQuery && body.length > 0 && isInsert(urlQuery)) {
    sql = urlQuery;
    insertData = body;
  } else if (urlQuery && body.length > 0) {
    sql = `${urlQuery}\n${body.toString('utf8')}`;
  } else {
    sql = urlQuery || body.toString('utf8');
  }
  if (sql.trim() === '') {
    throw new ClickHouseHttpError(ErrorCode.SYNTAX_ERROR, 'Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)');
  }
  return {
    sql,
    insertData,
    database: fields.get('database') || 'default',
    params,
    settings,
    defaultFormat: fields.get('default_format') || 'TabSeparated',
  };
}

/** Picks a response codec the client accepts, when it asked for compression. */
function responseEncoding(req: http.IncomingMessage, url: URL): 'gzip' | 'deflate' | 'br' | undefined {
  if (url.searchParams.get('enable_http_compression') !== '1') return undefined;
  const accepted = String(req.headers['accept-encoding'] ?? '').toLowerCase();
  return (['gzip', 'br', 'deflate'] as const).find((codec) => accepted.includes(codec));
}

async function compress(body: Uint8Array, encoding: 'gzip' | 'deflate' | 'br'): Promise<Buffer> {
  if (encoding === 'gzip') return promisify(zlib.gzip)(body);
  if (encoding === 'deflate') return promisify(zlib.deflate)(body);
  return promisify(zlib.brotliCompress)(body);
}

function contentTypeFor(format: string): string {
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8';
  if (/^(TSV|TabSeparated)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  return 'application/octet-stream';
}

function sendError(res: http.ServerResponse, queryId: string, err: unknown): void {
  const error = err instanceof ClickHouseHttpError ? err : ClickHouseHttpError.fromEngine(err);
  res.writeHead(error.httpStatus, {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Query-Id': queryId,
    'X-ClickHouse-Exception-Code': String(error.code),
  });
  res.end(`${error.message}\n`);
}

export interface ChdbHttpFront {
  port: number;
  close(): Promise<void>;
}

/** Starts the HTTP front on `host:port` (port 0 picks a free one). */
export async function startChdbHttpFront(options: { dataDir: string; port: number; host?: string }): Promise<ChdbHttpFront> {
  const engine = new ChdbEngine(options.dataDir);

  // ClickHouse reads a URI of up to http_max_uri_size (1 MiB); Node's default header limit (16 KiB)
  // would refuse the long query parameters (a HogQL query's literals) ClickHouse takes.
  const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const queryId = url.searchParams.get('query_id') || randomUUID();
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
      res.end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') {
      req.resume();
      sendError(
        res,
        queryId,
        new ClickHouseHttpError(ErrorCode.STD_EXCEPTION, `Code: 1001. DB::Exception: There is no handle ${url.pathname}. (STD_EXCEPTION)`, 404),
      );
      return;
    }
    void (async () => {
      try {
        const request = await decodeRequest(req, url);
        const response = await engine.execute(request);
        const encoding = responseEncoding(req, url);
        const body = encoding ? await compress(response.body, encoding) : response.body;
        res.writeHead(200, {
          'Content-Type': contentTypeFor(response.format),
          'X-ClickHouse-Query-Id': queryId,
          'X-ClickHouse-Format': response.format,
          'X-ClickHouse-Timezone': Intl.DateTimeFormat().resolvedOptions().timeZone,
          'X-ClickHouse-Summary': JSON.stringify(response.summary),
          ...(encoding ? { 'Content-Encoding': encoding } : {}),
        });
        res.end(body);
      } catch (err) {
        sendError(res, queryId, err);
      }
    })();
  });

  // Clients keep idle sockets for a few seconds (undici about 4 s, @clickhouse/client 2.5 s) and
  // expire them by timers; a test process whose event loop is blocked for seconds (loading PGlite,
  // a busy machine) fires those timers late and sends on a socket Node's default 5 s keep-alive
  // already closed ("other side closed"). The server keeps idle sockets far longer, so the client
  // side always closes first.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;

  return {
    port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.drain();
      engine.close();
    },
  };
}

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const dataDir = argValue('--data-dir') ?? process.env.CHDB_FRONT_DATA_DIR;
  const port = Number(argValue('--port') ?? process.env.CHDB_FRONT_PORT ?? 8123);
  if (!dataDir) throw new Error('chdb-http-front: --data-dir (or CHDB_FRONT_DATA_DIR) is required');
  const front = await startChdbHttpFront({ dataDir, port });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Give in-flight queries a moment: closing chdb under a running query aborts the engine.
    const deadline = setTimeout(() => process.exit(0), 3000);
    void front.close().finally(() => {
      clearTimeout(deadline);
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(`listening ${front.port}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
