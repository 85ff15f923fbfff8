import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errors, type ApiErrorBody } from './api-error';
import type { Logger } from '@sightline/logger';

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then drops idle keep-alive sockets. */
  close(): Promise<void>;
}

/**
 * How long a client may take to send its request. Without them a client holding connections
 * open with a few body bytes (or a body trickling in) would keep them forever.
 */
export interface RequestTimeouts {
  /** Request line and headers. */
  headersMs: number;
  /** The whole request, body included: bounds a body that trickles in without ever pausing long. */
  requestMs: number;
  /** The longest pause while a body arrives. */
  bodyIdleMs: number;
}

/** The timeouts from an app's parsed configuration (the HTTP_*_TIMEOUT_MS settings). */
export function requestTimeoutsFromConfig(config: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_BODY_IDLE_TIMEOUT_MS: number;
}): RequestTimeouts {
  return { headersMs: config.HTTP_HEADERS_TIMEOUT_MS, requestMs: config.HTTP_REQUEST_TIMEOUT_MS, bodyIdleMs: config.HTTP_BODY_IDLE_TIMEOUT_MS };
}

export const DEFAULT_REQUEST_TIMEOUTS: Readonly<RequestTimeouts> = Object.freeze({ headersMs: 10_000, requestMs: 60_000, bodyIdleMs: 10_000 });

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

/** The answer to a request Node's parser refused or that timed out, in the DRF envelope every other error uses. */
export function clientErrorResponse(error: NodeJS.ErrnoException): { status: number; body: ApiErrorBody } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, body: errors.validation('The request line or headers are too large.', null, 'request_header_fields_too_large').toBody() };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        body: { type: 'invalid_request', code: 'request_timeout', detail: 'The request was not received in time.', attr: null },
      };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, body: errors.parse('Malformed request: both Content-Length and Transfer-Encoding are set.').toBody() };
    default:
      return { status: 400, body: errors.parse('Malformed HTTP request.').toBody() };
  }
}

function answerRaw(socket: Socket, status: number, body: ApiErrorBody): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Whether a response has begun on this socket: then raw bytes can no longer be written. */
const responseStarted = (socket: Socket) => (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;

/**
 * Arms the body-idle timeout while a request's body arrives, through the socket's inactivity
 * timer (req.setTimeout), so the body stream itself is left untouched for whichever parser reads
 * it. Once the body has arrived the timer is dropped; if the answer went out first, Node has set
 * the socket's keep-alive timer by then and it is left alone, while a client that stalls on the
 * rest of its body (which Node reads and discards) is still cut off.
 */
function guardBodyIdle(req: IncomingMessage, res: ServerResponse, idleMs: number): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (!hasBody || req.complete) return;
  const socket = req.socket;
  const onIdle = () => {
    if (!res.headersSent) {
      const { status, body } = clientErrorResponse(Object.assign(new Error('body idle'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
      const text = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
      // The rest of the body will not come: the connection cannot carry another request.
      res.end(text, () => socket.destroy());
    } else socket.destroy();
  };
  req.setTimeout(idleMs, onIdle);
  req.once('end', () => {
    req.off('timeout', onIdle);
    if (!res.writableFinished) socket.setTimeout(0);
  });
  res.once('close', () => req.off('timeout', onIdle));
}

export async function listen(handler: RequestListener, options: { host: string; port: number; timeouts?: Partial<RequestTimeouts> }): Promise<RunningServer> {
  const timeouts = { ...DEFAULT_REQUEST_TIMEOUTS, ...options.timeouts };
  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // Node checks the two timeouts above on this interval (30 s by default, which would let a
      // slow client keep its connection up to 30 s past its deadline).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 4))),
    },
    (req, res) => {
      guardBodyIdle(req, res, timeouts.bodyIdleMs);
      handler(req, res);
    },
  );
  // Refused requests (malformed, oversized headers, timeouts) get the JSON error shape too,
  // instead of Node's empty-bodied default.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const { status, body } = clientErrorResponse(error);
    answerRaw(socket, status, body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * Runs `stop` once on SIGTERM/SIGINT, with a hard deadline: an unref'd timer exits the
 * process if the graceful path hangs (a stuck broker, a long query).
 */
export function installShutdown(options: { logger: Logger; deadlineMs: number; stop: () => Promise<void> }): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ signal, deadlineMs: options.deadlineMs }, 'shutting down');
    setTimeout(() => {
      options.logger.error('shutdown deadline passed; exiting now');
      process.exit(1);
    }, options.deadlineMs).unref();
    options
      .stop()
      .then(() => {
        options.logger.info('shutdown complete');
        process.exit(0);
      })
      .catch((err: unknown) => {
        options.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
