import { randomUUID } from 'node:crypto';
import type { ProjectSdkSettings } from '@sightline/accounts';
import type { FlagResult } from '@sightline/flags';
import { buildRemoteConfig } from '../remote-config';

/**
 * Response shapes of /decide and /flags by version (docs/http-api.md#decide-response; PostHog: rust/feature-flags/src/api/types.rs):
 * - `flags-v2`: `flags` map of {key, enabled, variant, reason, metadata} (/flags v>=2, /decide v>=4)
 * - `v3`: `featureFlags` with false values + `featureFlagPayloads` (/flags v=1, /decide v=3)
 * - `v2`: `featureFlags` of enabled flags only (/decide v=2)
 * - `v1`: `featureFlags` as the list of enabled keys (/decide v=1 or no/unknown version)
 */
export type ResponseShape = 'flags-v2' | 'v3' | 'v2' | 'v1';

export interface ShapeChoice {
  shape: ResponseShape;
  withConfig: boolean;
}

const bool = (value: unknown) => value === 'true' || value === '1' || value === 'yes';

function version(query: Record<string, unknown>): number | null {
  const v = Number(query['v']);
  return typeof query['v'] === 'string' && Number.isFinite(v) ? v : null;
}

/** /flags: no v and no config means v=2 with config (PostHog: rust/feature-flags/src/api/endpoint.rs). */
export function flagsShape(query: Record<string, unknown>): ShapeChoice {
  const v = version(query);
  if (v === null && query['config'] === undefined) return { shape: 'flags-v2', withConfig: true };
  return { shape: v !== null && v >= 2 ? 'flags-v2' : 'v3', withConfig: bool(query['config']) };
}

/** /decide always carries the config. */
export function decideShape(query: Record<string, unknown>): ShapeChoice {
  const v = version(query);
  const shape: ResponseShape = v === null ? 'v1' : v >= 4 ? 'flags-v2' : v >= 3 ? 'v3' : v >= 2 ? 'v2' : 'v1';
  return { shape, withConfig: true };
}

/** A project's settings as a new project has them (everything but autocapture off). */
export const DEFAULT_SDK_SETTINGS: ProjectSdkSettings = {
  autocapture_opt_out: false,
  autocapture_exceptions_opt_in: false,
  autocapture_web_vitals_opt_in: false,
  capture_performance_opt_in: false,
  capture_dead_clicks: false,
  heatmaps_opt_in: false,
};

/**
 * The config part of /decide (and /flags?config=true): the project's remote config, which
 * posthog-js now loads separately, with the legacy decide-only fields (PostHog:
 * rust/feature-flags/src/handler/config_response_builder.rs).
 */
export function configFields(settings: ProjectSdkSettings = DEFAULT_SDK_SETTINGS): Record<string, unknown> {
  const { token: _token, hasFeatureFlags: _has, productTours: _tours, ...shared } = buildRemoteConfig('', settings, true);
  return { config: { enable_collect_everything: true }, toolbarParams: {}, isAuthenticated: false, flagsPersistenceDefault: false, ...shared };
}

export function buildFlagsResponse(
  results: Iterable<FlagResult>,
  errorsWhileComputingFlags: boolean,
  choice: ShapeChoice,
  settings: ProjectSdkSettings = DEFAULT_SDK_SETTINGS,
): Record<string, unknown> {
  // Flags that could not be computed are left out, so clients keep the values they had.
  const computed = [...results].filter((r) => !r.failed);
  const body: Record<string, unknown> = {};
  switch (choice.shape) {
    case 'flags-v2':
      body['flags'] = Object.fromEntries(
        computed.map((r) => [
          r.key,
          {
            key: r.key,
            enabled: r.enabled,
            variant: r.variant,
            reason: r.reason,
            // No payload: the key is left out, as PostHog's FlagDetailsMetadata skips a None payload
            // (posthog-node then reports no payload at all rather than a null one).
            metadata:
              r.payload === null || r.payload === undefined
                ? { id: r.id, version: r.version, description: r.description }
                : { id: r.id, version: r.version, description: r.description, payload: r.payload },
          },
        ]),
      );
      break;
    case 'v3':
      body['featureFlags'] = Object.fromEntries(computed.map((r) => [r.key, r.variant ?? r.enabled]));
      body['featureFlagPayloads'] = Object.fromEntries(computed.filter((r) => r.enabled && r.payload !== null).map((r) => [r.key, r.payload]));
      break;
    case 'v2':
      body['featureFlags'] = Object.fromEntries(computed.filter((r) => r.enabled).map((r) => [r.key, r.variant ?? true]));
      break;
    case 'v1':
      body['featureFlags'] = computed.filter((r) => r.enabled).map((r) => r.key);
      break;
  }
  body['errorsWhileComputingFlags'] = errorsWhileComputingFlags;
  body['requestId'] = randomUUID();
  if (choice.shape === 'flags-v2') body['evaluatedAt'] = Date.now();
  return choice.withConfig ? { ...configFields(settings), ...body } : body;
}

/** A finite number as JSON.stringify writes it (NaN and ±Infinity are null). */
const numberText = (n: number) => (Number.isFinite(n) ? String(n) : 'null');

/** An array index ("0", "42"): an object lists such keys first, in numeric order, whatever the insertion order. */
const isArrayIndex = (key: string) => /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4294967295;

/** What one flag's answer repeats from request to request, as JSON text. */
interface FlagTexts {
  id: number;
  version: number;
  description: string | null;
  /** `"<key>":{"key":"<key>","enabled":` */
  head: string;
  /** `"metadata":{"id":…,"version":…,"description":…` (without the payload and closing brace) */
  metadata: string;
  /** A string payload → `,"payload":"<its JSON text>"`. */
  payloads: Map<string, string>;
}

/** Texts per flag key, checked against the result's id, version and description on each use. */
const flagTexts = new Map<string, FlagTexts>();
/** Bounds the per-key texts (flag keys of every project this process answers). */
const MOST_FLAG_TEXTS = 20_000;
/** Most payload texts kept per flag. */
const MOST_PAYLOAD_TEXTS = 64;
/** `"reason":{…}` per reason object (the engine's reasons are shared and frozen: reasonOf). */
const reasonTexts = new WeakMap<FlagResult['reason'], string>();
/** `"variant":"<variant>"` per variant. */
const variantTexts = new Map<string, string>();

function textsOf(r: FlagResult): FlagTexts {
  const known = flagTexts.get(r.key);
  if (known && known.id === r.id && known.version === r.version && known.description === r.description) return known;
  const key = JSON.stringify(r.key);
  const texts: FlagTexts = {
    id: r.id,
    version: r.version,
    description: r.description,
    head: `${key}:{"key":${key},"enabled":`,
    metadata: `"metadata":{"id":${numberText(r.id)},"version":${numberText(r.version)},"description":${JSON.stringify(r.description)}`,
    payloads: new Map(),
  };
  if (flagTexts.size >= MOST_FLAG_TEXTS) flagTexts.clear();
  flagTexts.set(r.key, texts);
  return texts;
}

function reasonText(reason: FlagResult['reason']): string {
  let text = reasonTexts.get(reason);
  if (text === undefined) reasonTexts.set(reason, (text = `"reason":${JSON.stringify(reason)}`));
  return text;
}

function variantText(variant: string | null): string {
  if (variant === null) return '"variant":null';
  let text = variantTexts.get(variant);
  if (text === undefined) {
    text = `"variant":${JSON.stringify(variant)}`;
    if (variantTexts.size >= MOST_FLAG_TEXTS) variantTexts.clear();
    variantTexts.set(variant, text);
  }
  return text;
}

function payloadText(texts: FlagTexts, payload: unknown): string {
  if (payload === null || payload === undefined) return '';
  if (typeof payload !== 'string') return `,"payload":${JSON.stringify(payload)}`;
  let text = texts.payloads.get(payload);
  if (text === undefined) {
    text = `,"payload":${JSON.stringify(payload)}`;
    // A flag version's payloads are one per variant; the bound only guards memory.
    if (texts.payloads.size < MOST_PAYLOAD_TEXTS) texts.payloads.set(payload, text);
  }
  return text;
}

/** The `flags` map's text per results map: decide reuses a stored person's results (reused-evaluations.ts). */
const flagsTexts = new WeakMap<ReadonlyMap<string, FlagResult>, string | null>();

/** The inside of the `flags` map, or null when an object would order its keys otherwise (an array-index key). */
function flagsText(results: ReadonlyMap<string, FlagResult>): string | null {
  const known = flagsTexts.get(results);
  if (known !== undefined) return known;
  let flags: string | null = '';
  for (const r of results.values()) {
    if (r.failed) continue;
    if (isArrayIndex(r.key)) {
      flags = null;
      break;
    }
    const texts = textsOf(r);
    flags += `${flags === '' ? '' : ','}${texts.head}${r.enabled},${variantText(r.variant)},${reasonText(r.reason)},${texts.metadata}${payloadText(texts, r.payload)}}}`;
  }
  flagsTexts.set(results, flags);
  return flags;
}

/**
 * The JSON text of buildFlagsResponse's answer, exactly as JSON.stringify writes it, for the
 * hottest shape (flags-v2, what posthog-js and the server SDKs ask for) written from texts kept
 * per flag key, reason and variant: no answer objects are built per request, and JSON.stringify
 * no longer walks 50 nested objects. `results` is evaluateFlags' map (one result per key). The
 * other shapes, and any answer this writer would order otherwise than an object does (a flag key
 * that is an array index, a config with one of the answer's own keys), go through
 * buildFlagsResponse and JSON.stringify.
 */
export function flagsResponseText(
  results: ReadonlyMap<string, FlagResult>,
  errorsWhileComputingFlags: boolean,
  choice: ShapeChoice,
  settings: ProjectSdkSettings = DEFAULT_SDK_SETTINGS,
): string {
  const generic = () => JSON.stringify(buildFlagsResponse(results.values(), errorsWhileComputingFlags, choice, settings));
  if (choice.shape !== 'flags-v2') return generic();
  let config = '';
  if (choice.withConfig) {
    const fields = configFields(settings);
    if (['flags', 'errorsWhileComputingFlags', 'requestId', 'evaluatedAt'].some((k) => Object.prototype.hasOwnProperty.call(fields, k))) return generic();
    const text = JSON.stringify(fields);
    config = text === '{}' ? '' : `${text.slice(1, -1)},`;
  }
  const flags = flagsText(results);
  if (flags === null) return generic();
  return `{${config}"flags":{${flags}},"errorsWhileComputingFlags":${errorsWhileComputingFlags},"requestId":"${randomUUID()}","evaluatedAt":${Date.now()}}`;
}
