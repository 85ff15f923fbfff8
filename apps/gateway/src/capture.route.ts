import express, { Router, type Request, type RequestHandler } from 'express';
import type { EventBus, BusMessage, Topics } from '@sightline/bus';
import { errors } from '@sightline/http';
import { normalizeEvent, readCapturePayload, PayloadError } from '@sightline/ingestion';
import type { Metrics } from '@sightline/metrics';
import { decodeCaptureBody } from './capture-body';
import type { ProjectKeyResolver } from './project-keys';

/** Ingestion routes; Express's non-strict routing also matches each with a trailing slash. */
export const CAPTURE_ROUTES = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'] as const;

/** The interface document's batch cap; PostHog's own. */
export const MAX_BODY_BYTES = 20 * 1024 * 1024;

export interface CaptureDeps {
  bus: EventBus;
  topics: Topics;
  projectKeys: ProjectKeyResolver;
  metrics: Metrics;
  /** Longest wait for the bus before answering 503. */
  sendTimeoutMs: number;
  now?: () => number;
}

const PROJECT_KEY_PATTERN = /^[\x21-\x7e]{1,64}$/;

function clientIp(req: Request): string | null {
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || req.socket.remoteAddress || null;
}

/** Every ingest response is readable cross-origin: browsers send events from any site. */
export const ingestCors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
  res.setHeader('Access-Control-Allow-Credentials', 'true');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type');
  res.setHeader('Vary', 'Origin');
  if (req.method === 'OPTIONS') {
    res.status(200).json({ status: 1 });
    return;
  }
  next();
};

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`bus did not acknowledge within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export function createCaptureRouter(deps: CaptureDeps): Router {
  const now = deps.now ?? Date.now;
  const router = Router();
  const readBody = express.raw({ type: () => true, limit: MAX_BODY_BYTES, inflate: true });

  const capture: RequestHandler = async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const body = decodeCaptureBody(raw, req.headers['content-type'], MAX_BODY_BYTES);
    let payload;
    try {
      payload = readCapturePayload(body);
    } catch (error) {
      if (error instanceof PayloadError) {
        if (error.reason === 'inconsistent_tokens') throw errors.invalidProjectKey(error.message);
        throw errors.validation(error.message, null, 'invalid_payload');
      }
      throw error;
    }
    const token = payload.token;
    if (token === null) throw errors.invalidProjectKey('API key not provided. You can find your project API key in your project settings.');
    if (!PROJECT_KEY_PATTERN.test(token) || token.startsWith('phx_')) {
      throw errors.invalidProjectKey('Project API key invalid. You can find your project API key in your project settings.');
    }
    const key = await deps.projectKeys.resolve(token);
    if (key.status === 'unknown') throw errors.invalidProjectKey('Project API key invalid. You can find your project API key in your project settings.');
    if (key.status === 'unavailable') deps.metrics.projectKeyLookupsFailedOpen.inc();

    const ctx = {
      token,
      teamId: key.status === 'known' ? key.teamId : null,
      nowMs: now(),
      sentAt: payload.sentAt,
      ip: clientIp(req),
      historicalMigration: payload.historicalMigration,
    };
    const messages: BusMessage[] = [];
    for (const event of payload.events) {
      const result = normalizeEvent(event, ctx);
      if (result.ok) messages.push({ key: result.key, value: JSON.stringify(result.message) });
      else deps.metrics.eventsDropped.inc({ reason: result.reason });
    }
    const topic = payload.historicalMigration ? deps.topics.eventsHistorical : deps.topics.events;
    const started = process.hrtime.bigint();
    try {
      await withTimeout(deps.bus.send(topic, messages), deps.sendTimeoutMs);
    } catch (error) {
      req.log.warn({ err: error, topic, events: messages.length }, 'bus send failed; answering 503');
      throw errors.unavailable('transient error, please retry', 5);
    }
    deps.metrics.busSendDuration.observe({ topic }, Number(process.hrtime.bigint() - started) / 1e9);
    deps.metrics.eventsAccepted.inc({ route: req.route?.path ?? req.path }, messages.length);
    res.status(200).json({ status: 1 });
  };

  for (const path of CAPTURE_ROUTES) {
    router.options(path, ingestCors);
    router.post(path, ingestCors, readBody, capture);
    // PostHog accepts GET with the payload in `data`; not needed by current SDKs.
    router.get(path, ingestCors, (_req, _res, next) => next(errors.methodNotAllowed('GET', 'Use POST to send events.')));
  }
  return router;
}
