const MAX_FUTURE_MS = 23 * 3600 * 1000;
const MIN_MS = Date.UTC(0, 0, 1) - 1900 * 365.25 * 86400 * 1000; // ≈ year 0
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const epochMs = (value: number) => (value < 1e11 ? value * 1000 : value);
const ZONELESS_DATETIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
const EPOCH_TEXT = /^\d+(?:\.\d+)?$/;

/**
 * RFC 3339 / ISO 8601 (with `+HH` zones normalised), a civil datetime without zone taken as
 * UTC (Date.parse would take it as local time), other forms Date.parse reads (date only,
 * RFC 2822), or epoch seconds/milliseconds as a number or numeric text.
 */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? epochMs(value) : null;
  if (typeof value !== 'string' || value.length === 0) return null;
  // A UTC text (what SDKs send: toISOString) matches neither form below: Date.parse reads it as is.
  if (value.charCodeAt(value.length - 1) === 0x5a /* Z */) return nullIfNaN(Date.parse(value));
  if (EPOCH_TEXT.test(value)) return epochMs(Number(value));
  const zoneless = ZONELESS_DATETIME.exec(value);
  const normalised = zoneless ? `${zoneless[1]}T${zoneless[2]}Z` : value.replace(/([+-]\d{2})$/, '$1:00');
  return nullIfNaN(Date.parse(normalised));
}

const nullIfNaN = (ms: number) => (Number.isNaN(ms) ? null : ms);

/**
 * PostHog's event time: the client timestamp corrected by the client's clock skew
 * (now − sent_at), `offset` (ms before now) winning over both; more than 23 h in the
 * future is clamped to now; outside years 0–9999 becomes the epoch.
 */
export function computeTimestamp(input: { timestamp: unknown; offset: unknown; sentAt: unknown; nowMs: number; ignoreSentAt: boolean }): number {
  const { nowMs } = input;
  let ts = nowMs;
  const clientTs = parseTimestamp(input.timestamp);
  const sentAt = input.ignoreSentAt ? null : parseTimestamp(input.sentAt);
  if (clientTs !== null) ts = sentAt !== null ? nowMs + (clientTs - sentAt) : clientTs;
  if (typeof input.offset === 'number' && Number.isFinite(input.offset)) ts = nowMs - input.offset;
  if (ts - nowMs > MAX_FUTURE_MS) ts = nowMs;
  if (ts < MIN_MS || ts > MAX_MS) ts = 0;
  return ts;
}
