import type { IncomingMessage, ServerResponse } from 'node:http';
import { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { EventBus, BusMessage, Topics } from '@sightline/bus';
import { withDeadline } from '@sightline/deadline';
import { ApiError, clientIp, errors, ROUTE_LABEL_LOCAL } from '@sightline/http';
import {
  exceedsBusMessageBytes,
  MAX_EVENT_MESSAGE_BYTES,
  normalizeEvent,
  readCapturePayload,
  PayloadError,
  type CapturePayload,
  type DropReason,
} from '@sightline/ingestion';
import type { Metrics } from '@sightline/metrics';
import { decodeCaptureText, parseCaptureJson, readCaptureBody, readCompression, type BodyLimits } from './capture-body';
import { IngestBusMessage } from './ingest-bus-message';
import { createLz64Decoder } from './lz64-decoder';
import type { ProjectKeyResolver } from './project-keys';

const MiB = 1024 * 1024;
/** The decompressed (or decoded) body may be this many times the wire cap. */
export const DECODED_BUDGET_FACTOR = 5;

const limitsFor = (wireBytes: number): BodyLimits => ({ wireBytes, decodedBytes: wireBytes * DECODED_BUDGET_FACTOR });

/** /batch: 20 MiB, PostHog's (rust/capture/src/router.rs). */
export const BATCH_LIMITS = limitsFor(20 * MiB);
/** Single-event routes: PostHog's 2 MiB (rust/capture/src/router.rs). */
export const EVENT_LIMITS = limitsFor(2 * MiB);

export interface CaptureRoute {
  /** Without trailing slash; the slash form is served too (never redirected). */
  path: string;
  limits: BodyLimits;
}

/** Every ingest route, with its body caps. Tests generate their cases from this table. */
export const CAPTURE_ROUTES: readonly CaptureRoute[] = [
  { path: '/batch', limits: BATCH_LIMITS },
  { path: '/capture', limits: EVENT_LIMITS },
  { path: '/e', limits: EVENT_LIMITS },
  { path: '/i/v0/e', limits: EVENT_LIMITS },
  { path: '/track', limits: EVENT_LIMITS },
  { path: '/engage', limits: EVENT_LIMITS },
];

export interface CaptureDeps {
  bus: EventBus;
  topics: Topics;
  projectKeys: ProjectKeyResolver;
  metrics: Metrics;
  /** Longest wait for the bus before answering 503. */
  sendTimeoutMs: number;
  /** Capture requests handled at once (reading, validating or waiting for the bus); more get 503. */
  maxInflightRequests?: number;
  isShuttingDown?: () => boolean;
  now?: () => number;
}

export { MAX_EVENT_MESSAGE_BYTES };

/** Seconds a client is told to wait after a 503. */
export const RETRY_AFTER_SECONDS = 5;
export const DEFAULT_MAX_INFLIGHT_REQUESTS = 2000;

const MAX_PROJECT_KEY_LENGTH = 64;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const KEY_HINT = 'You can find your project API key in your project settings.';

/** PostHog checks only the key's shape before looking it up (rust/capture/src/api.rs). */
function projectKeyShapeProblem(token: string): string | null {
  if (token.length > MAX_PROJECT_KEY_LENGTH) return 'too_long';
  if (!PRINTABLE_ASCII.test(token)) return 'not_ascii';
  if (token.startsWith('phx_')) return 'personal_api_key';
  return null;
}

/** The query string as a map, parsed only when a request has one (most SDK requests do not). */
function queryOf(url: string): URLSearchParams | null {
  const mark = url.indexOf('?');
  return mark === -1 ? null : new URLSearchParams(url.slice(mark + 1));
}

/** `?_=` / `?sent_at=` (client ms); ignored when it reads as year ≤ 2020, i.e. probably seconds (rust/capture/src/v0_request.rs). */
const EARLIEST_QUERY_SENT_AT_MS = Date.UTC(2021, 0, 1);
function querySentAt(query: URLSearchParams | null): string | null {
  const raw = query?.get('_') ?? query?.get('sent_at');
  if (!raw) return null;
  const ms = Number(raw);
  return Number.isFinite(ms) && ms >= EARLIEST_QUERY_SENT_AT_MS ? new Date(ms).toISOString() : null;
}

/**
 * Every ingest response is readable cross-origin (browsers send events from any site): the
 * origin and requested headers are mirrored, without credentials (the project key is in the
 * body; posthog-js sends no cookies cross-site). Allow-Methods/Headers matter only to a
 * preflight, so other answers skip them.
 */
function setCorsHeaders(req: IncomingMessage, res: ServerResponse, preflight: boolean): void {
  res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
  res.setHeader('Vary', 'Origin');
  if (preflight) {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type');
  }
}

// A string, not a Buffer: node then sends headers and body in one write instead of a writev
// of two buffers, the single largest cost of a capture request (bench/gateway.ts).
const OK_BODY = JSON.stringify({ status: 1 });
function answerOk(res: ServerResponse, body = OK_BODY): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  // Both answers are ASCII: characters are bytes.
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** An event of the request that was not ingested: its place in the request's list and why. */
export interface DroppedEvent {
  index: number;
  reason: DropReason;
}

/**
 * The 200 answer when some events were dropped: `dropped` lists them (docs/http-api.md#capture-answers),
 * so an importer can count them; PostHog's clients read only `status` and ignore the rest.
 */
const okBodyWithDrops = (dropped: DroppedEvent[]) => JSON.stringify({ status: 1, dropped });

function readPayload(body: unknown): CapturePayload {
  try {
    return readCapturePayload(body);
  } catch (error) {
    if (error instanceof PayloadError) {
      if (error.reason === 'inconsistent_tokens') throw errors.invalidProjectKey(error.message);
      throw errors.validation(error.message, null, 'invalid_payload');
    }
    throw error;
  }
}

/**
 * The ingest routes as one Express middleware: every route is dispatched by a map lookup on
 * the path (instead of 3 layers × 12 paths, each a regular expression tried in turn), and the
 * body is read by our own streaming reader, not express.raw: see bench/gateway.ts.
 */
export function createCaptureRouter(deps: CaptureDeps): RequestHandler {
  const now = deps.now ?? Date.now;
  const maxInflight = deps.maxInflightRequests ?? DEFAULT_MAX_INFLIGHT_REQUESTS;
  let inflight = 0;
  const lz64 = createLz64Decoder();
  const routes = new Map<string, CaptureRoute>();
  for (const route of CAPTURE_ROUTES) {
    routes.set(route.path, route);
    routes.set(`${route.path}/`, route);
  }

  const capture = async (req: Request, res: Response, route: CaptureRoute): Promise<void> => {
    const query = queryOf(req.url);
    const compression = readCompression(query?.get('compression'));
    const contentEncoding = req.headers['content-encoding'];
    if (contentEncoding !== undefined && contentEncoding !== 'gzip' && contentEncoding !== 'identity') {
      throw errors.unsupportedMediaType(`Unsupported Content-Encoding "${contentEncoding}": send gzip or an uncompressed body.`);
    }
    // gzip is told from the body's first bytes, not from Content-Encoding or the hint (see readCaptureBody).
    const bytes = await readCaptureBody(req, route.limits);
    const text = await decodeCaptureText(bytes, req.headers['content-type'], compression, route.limits, lz64);
    const payload = readPayload(parseCaptureJson(text));

    const token = payload.token;
    if (token === null) throw errors.invalidProjectKey(`API key not provided. ${KEY_HINT}`);
    const shapeProblem = projectKeyShapeProblem(token);
    if (shapeProblem !== null) throw errors.invalidProjectKey(`API key is not valid: ${shapeProblem}. ${KEY_HINT}`);
    const key = await deps.projectKeys.resolve(token);
    if (key.status === 'unknown') throw errors.invalidProjectKey(`Project API key invalid. ${KEY_HINT}`);
    if (key.status === 'unavailable') deps.metrics.projectKeyLookupsFailedOpen.inc();

    const ctx = {
      token,
      teamId: key.status === 'known' ? key.teamId : null,
      nowMs: now(),
      sentAt: payload.sentAt ?? querySentAt(query),
      ip: clientIp(req),
      historicalMigration: payload.historicalMigration,
    };
    const messages: BusMessage[] = [];
    const readsValues = deps.bus.readsValues === true;
    let dropped: DroppedEvent[] | null = null;
    for (let index = 0; index < payload.events.length; index++) {
      const result = normalizeEvent(payload.events[index], ctx);
      if (!result.ok) {
        deps.metrics.eventsDropped.inc({ reason: result.reason });
        (dropped ??= []).push({ index, reason: result.reason });
        continue;
      }
      const message = new IngestBusMessage(result.key, result.message);
      // A bus that reads every value (Kafka) has each message encoded anyway: its length is
      // measured, not bounded by a walk of the event first. A message measured here keeps its
      // encoding for the bus.
      if (readsValues ? message.value.length > MAX_EVENT_MESSAGE_BYTES : exceedsBusMessageBytes(result.message, () => message.value)) {
        throw new ApiError(413, 'invalid_request', 'payload_too_large', `maximum event size exceeded: an event is over ${MAX_EVENT_MESSAGE_BYTES} bytes`);
      }
      messages.push(message);
    }
    const topic = payload.historicalMigration ? deps.topics.eventsHistorical : deps.topics.events;
    if (messages.length > 0) {
      // Only requests waiting on the bus count: a client still sending its body holds no slot
      // (slow bodies are bounded by the server's request timeouts instead), so stalled uploads
      // cannot crowd out everyone else's captures.
      if (inflight >= maxInflight) {
        throw errors.unavailable(`too many requests in flight (${maxInflight}), please retry`, RETRY_AFTER_SECONDS);
      }
      const started = process.hrtime.bigint();
      inflight++;
      try {
        await withDeadline(deps.bus.send(topic, messages), deps.sendTimeoutMs, () => new Error(`bus did not acknowledge within ${deps.sendTimeoutMs} ms`));
      } catch (error) {
        req.log.warn({ err: error, topic, events: messages.length }, 'bus send failed; answering 503');
        throw errors.unavailable('transient error, please retry', RETRY_AFTER_SECONDS);
      } finally {
        inflight--;
      }
      deps.metrics.busSendDuration.observe({ topic }, Number(process.hrtime.bigint() - started) / 1e9);
      deps.metrics.eventsAccepted.inc({ route: route.path }, messages.length);
    }
    // A beacon (navigator.sendBeacon) reads no answer; PostHog gives it 204.
    if (query?.get('beacon') === '1') {
      res.statusCode = 204;
      res.end();
      return;
    }
    answerOk(res, dropped === null ? OK_BODY : okBodyWithDrops(dropped));
  };

  const dispatch: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const mark = req.url.indexOf('?');
    const route = routes.get(mark === -1 ? req.url : req.url.slice(0, mark));
    if (route === undefined) return next();
    res.locals[ROUTE_LABEL_LOCAL] = route.path;
    setCorsHeaders(req, res, req.method === 'OPTIONS');
    if (deps.isShuttingDown?.()) res.setHeader('Connection', 'close');
    if (req.method === 'OPTIONS') return answerOk(res);
    // PostHog accepts GET with the payload in `data`; no current SDK sends it.
    if (req.method !== 'POST') return next(errors.methodNotAllowed(req.method, 'Use POST to send events.'));
    capture(req, res, route).catch(next);
  };

  // Mounted as the middleware itself, not inside a Router: a nested router's handle/next
  // chain per request is pure overhead for one map lookup.
  return dispatch;
}
