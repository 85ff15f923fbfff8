import { isJsonObject } from '@sightline/json-input';
/**
 * The shapes capture accepts (PostHog's untagged union): a single event, a bare array of
 * events, or a batch envelope {api_key|token, batch:[…], sent_at?, historical_migration?}.
 */
export interface RawEvent {
  event?: unknown;
  distinct_id?: unknown;
  $distinct_id?: unknown;
  properties?: unknown;
  timestamp?: unknown;
  offset?: unknown;
  uuid?: unknown;
  api_key?: unknown;
  token?: unknown;
  $token?: unknown;
  sent_at?: unknown;
  [key: string]: unknown;
}

export interface CapturePayload {
  /** Every element as sent: a non-object is dropped (and counted) by normalizeEvent, not here. */
  events: unknown[];
  token: string | null;
  sentAt: string | null;
  historicalMigration: boolean;
}

export class PayloadError extends Error {
  constructor(
    readonly reason: 'not_an_object' | 'no_events' | 'inconsistent_tokens',
    message: string,
  ) {
    super(message);
  }
}

const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function eventToken(e: RawEvent): string | null {
  for (const candidate of [e.api_key, e.token, e.$token, isJsonObject(e.properties) ? e.properties['token'] : undefined]) {
    if (nonEmptyString(candidate)) return candidate;
  }
  return null;
}

/** Splits a parsed body into events and the request-level fields. */
export function readCapturePayload(body: unknown): CapturePayload {
  let events: unknown[];
  let envelope: Record<string, unknown> = {};
  if (Array.isArray(body)) events = body;
  else if (isJsonObject(body) && Array.isArray(body['batch'])) {
    envelope = body;
    events = body['batch'];
  } else if (isJsonObject(body) && 'batch' in body && body['event'] === undefined) {
    // A batch envelope whose batch is not a list holds no events: PostHog's BatchedRequest needs
    // a list, and without an `event` the body is no single event either (read as one, it would
    // be dropped and the request answered 200).
    throw new PayloadError('no_events', 'batch must be a list of events');
  } else if (isJsonObject(body)) events = [body];
  else throw new PayloadError('not_an_object', 'Request body must be an event, an array of events or a batch.');

  if (events.length === 0) throw new PayloadError('no_events', 'request holds no event');
  const objects = events.filter(isJsonObject) as RawEvent[];
  if (objects.length === 0) throw new PayloadError('no_events', 'request holds no event');

  // Token: the envelope's first, then each event's; events must agree.
  let token: string | null = null;
  for (const c of [envelope['api_key'], envelope['token'], envelope['$token']]) if (token === null && nonEmptyString(c)) token = c;
  if (token === null) {
    for (const e of objects) {
      const t = eventToken(e);
      if (t === null) continue;
      if (token === null) token = t;
      else if (t !== token) throw new PayloadError('inconsistent_tokens', 'batch submitted with inconsistent api_key values');
    }
  }
  const sentAt = nonEmptyString(envelope['sent_at']) ? envelope['sent_at'] : null;
  return { events, token, sentAt, historicalMigration: envelope['historical_migration'] === true };
}
