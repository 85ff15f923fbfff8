import express, { Router, type RequestHandler } from 'express';
import { findProjectById, isProjectKeyShaped, type ProjectTokenLookup } from '@sightline/accounts';
import { withDeadline } from '@sightline/deadline';
import type { FlagDefinitionsCache, ProjectFlagDefinitions } from '@sightline/flag-store';
import { evaluateFlags, type Availability, type DateMargin, type EvaluationContext, type FlagDefinition, type FlagResult } from '@sightline/flags';
import type { GeoIpLookup } from '@sightline/geoip';
import querystring from 'node:querystring';
import {
  ApiError,
  clientIp,
  createRequestObserver,
  errors,
  publicCors,
  readBody,
  setPublicCorsHeaders,
  writeApiError,
  writeJsonText,
  type FastPathFactory,
} from '@sightline/http';
import type { Logger } from '@sightline/logger';
import { writeHashKeyOverrides, type DecidePersonCache, type PersonForDecide } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { isJsonObject } from '@sightline/json-input';
import { decodeFlagsBody, MAX_FLAGS_BODY_BYTES, readFlagRequest, type FlagRequest } from './decide-request';
import { buildFlagsResponse, decideShape, flagsResponseParts, flagsResponseText, flagsShape, type FlagsAnswerParts, type ShapeChoice } from './decide-response';
import { keepEvaluation, reusedEvaluation } from './reused-evaluations';

export interface DecideRouteDeps {
  db: MetadataStore;
  definitions: FlagDefinitionsCache;
  /** The stored persons decide reads, cached per process and dropped on the worker's writes. */
  persons: DecidePersonCache;
  projectTokens: ProjectTokenLookup;
  /** null: no $geoip_* properties. */
  geoip: GeoIpLookup | null;
  storeTimeoutMs: number;
}

/** What decide derives from a project's definitions, computed once per loaded definitions (not per request). */
interface DerivedFlags {
  byRuntime: Map<'server' | 'client', FlagDefinition[]>;
  continuityKeys: Map<FlagDefinition[], string[]>;
}
const derived = new WeakMap<ProjectFlagDefinitions, DerivedFlags>();
const derivedOf = (definitions: ProjectFlagDefinitions): DerivedFlags => {
  let d = derived.get(definitions);
  if (!d) derived.set(definitions, (d = { byRuntime: new Map(), continuityKeys: new Map() }));
  return d;
};

/** Flags the request's runtime may see (server SDKs send evaluation_runtime: "server"). */
function flagsForRuntime(definitions: ProjectFlagDefinitions, runtime: unknown): FlagDefinition[] {
  if (runtime !== 'server' && runtime !== 'client') return definitions.flags;
  const { byRuntime } = derivedOf(definitions);
  let flags = byRuntime.get(runtime);
  if (!flags) {
    flags = definitions.flags.filter((f) => !f.evaluation_runtime || f.evaluation_runtime === 'all' || f.evaluation_runtime === runtime);
    byRuntime.set(runtime, flags);
  }
  return flags;
}

/** Keys of the active flags that keep a person's experience across identify. */
function continuityKeysOf(definitions: ProjectFlagDefinitions, flags: FlagDefinition[]): string[] {
  const { continuityKeys } = derivedOf(definitions);
  let keys = continuityKeys.get(flags);
  if (!keys) continuityKeys.set(flags, (keys = flags.filter((f) => f.active && f.ensure_experience_continuity).map((f) => f.key)));
  return keys;
}

/** The person store's answer within `ms`, else a rejection; the query itself runs on and its result is ignored. */
const withStoreTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  withDeadline(promise, ms, () => new Error(`person store did not answer within ${ms} ms`));

/** Reads what the flags need from the person store; what cannot be read is reported, not thrown. */
async function readStores(
  deps: DecideRouteDeps,
  teamId: number,
  request: FlagRequest,
  definitions: ProjectFlagDefinitions,
  flags: FlagDefinition[],
  log: () => Logger,
) {
  const availability: Availability = { personProperties: true, groupProperties: true, hashKeyOverrides: true, staticCohorts: true };
  const continuityKeys = continuityKeysOf(definitions, flags);
  // After writing hash keys, this request reads them back past the cache.
  let wroteHashKeys = false;
  if (request.anonDistinctId && continuityKeys.length > 0) {
    wroteHashKeys = true;
    const ids = [...new Set([request.distinctId, request.anonDistinctId])];
    const written = await withStoreTimeout(writeHashKeyOverrides(deps.db, teamId, ids, request.anonDistinctId, continuityKeys), deps.storeTimeoutMs).catch(
      (error: unknown) => {
        availability.hashKeyOverrides = false;
        log().warn({ err: error }, 'flags: could not write experience-continuity hash keys');
        return 0;
      },
    );
    // Other processes (and this one, for the person's other ids) may cache the person without them.
    if (written > 0) await deps.persons.announce(teamId);
  }
  const requestedGroups = Object.entries(request.groups)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && definitions.groupTypeIndexes.has(e[0]))
    .map(([name, key]) => ({ name, index: definitions.groupTypeIndexes.get(name)!, key }));
  // A completed read in the cache needs no deadline (nor its timer).
  const stored =
    (wroteHashKeys ? undefined : deps.persons.cached(teamId, request.distinctId, requestedGroups)) ??
    (await withStoreTimeout(deps.persons.read(deps.db, teamId, request.distinctId, requestedGroups, { fresh: wroteHashKeys }), deps.storeTimeoutMs).catch(
      (error: unknown): PersonForDecide | null => {
        log().warn({ err: error }, 'flags: person store unavailable, evaluating what the request alone decides');
        return null;
      },
    ));
  if (!stored) {
    availability.personProperties = false;
    availability.groupProperties = false;
    availability.staticCohorts = false;
    availability.hashKeyOverrides = false;
  }
  return { person: stored, groups: stored?.groups ?? null, requestedGroups, availability };
}

/** One flag evaluation request, read from Express or from the bare node:http request alike. */
interface FlagsCall {
  query: Record<string, unknown>;
  raw: Buffer;
  contentType: string | undefined;
  ip: string | null;
  /** The request's logger, built on first use (most requests never log). */
  log: () => Logger;
}

const NO_RESULTS: ReadonlyMap<string, FlagResult> = new Map();

/** The answer to one `/decide` or `/flags` POST, as JSON text (or its parts); refusals are thrown as ApiErrors. */
async function answerFlags(
  deps: DecideRouteDeps,
  shapeOf: (query: Record<string, unknown>) => ShapeChoice,
  call: FlagsCall,
): Promise<string | FlagsAnswerParts> {
  const choice = shapeOf(call.query);
  const compression = typeof call.query['compression'] === 'string' ? call.query['compression'] : undefined;
  const body = decodeFlagsBody(call.raw, call.contentType, compression);
  const request = readFlagRequest(body);
  if (request.token === null) throw errors.invalidProjectKey('API key not provided. You can find your project API key in your project settings.');
  const invalidKey = () => errors.invalidProjectKey('Project API key invalid. You can find your project API key in your project settings.');
  if (!isProjectKeyShaped(request.token) || request.token.startsWith('phx_')) throw invalidKey();
  let teamId: number | null;
  try {
    teamId = await deps.projectTokens(request.token);
  } catch (error) {
    call.log().error({ err: error }, 'flags: project key store unavailable');
    throw errors.unavailable('The project key store is unavailable; retry later.', 5);
  }
  if (teamId === null) throw invalidKey();
  // Only /decide and /flags?config=true carry the config; posthog-js's /flags?v=2 skips this read.
  const settings = choice.withConfig
    ? await findProjectById(deps.db, teamId).then(
        (project) => project ?? undefined,
        (error: unknown) => {
          call.log().warn({ err: error }, 'flags: project settings unavailable, answering the default config');
          return undefined;
        },
      )
    : undefined;
  if (request.disableFlags) return flagsResponseText(NO_RESULTS, false, choice, settings);

  let definitions: ProjectFlagDefinitions;
  try {
    ({ definitions } = await deps.definitions.get(teamId));
  } catch (error) {
    call.log().error({ err: error }, 'flags: no flag definitions could be read');
    return flagsResponseText(NO_RESULTS, true, choice, settings);
  }
  const flags = flagsForRuntime(definitions, body['evaluation_runtime']);
  const geoip = deps.geoip && !request.geoipDisable ? deps.geoip.lookup(call.ip ?? '') : {};
  const overrides = { ...geoip, ...request.personProperties };
  const { person, groups, requestedGroups, availability } = await readStores(deps, teamId, request, definitions, flags, call.log);
  const groupProperties: EvaluationContext['groupProperties'] = {};
  for (const group of requestedGroups) {
    const requested = request.groupProperties[group.name];
    groupProperties[group.name] = { $group_key: group.key, ...(groups?.get(group.index) ?? {}), ...(isJsonObject(requested) ? requested : {}) };
  }
  const now = Date.now();
  // Only a stored person's answer, with every store available, is kept (reused-evaluations.ts).
  const reusable = person !== null && person.personUuid !== null && Object.values(availability).every(Boolean);
  const inputs = reusable
    ? {
        flags,
        person,
        requestKey: JSON.stringify([request.distinctId, request.deviceId, overrides, request.groups, request.groupProperties, request.flagKeys]),
        now,
      }
    : null;
  const reused = inputs ? reusedEvaluation(inputs) : undefined;
  if (reused) return flagsResponseParts(reused.results, reused.failed, choice, settings);
  const dateMargin: DateMargin = { ms: Infinity };
  const results = evaluateFlags(
    flags,
    {
      distinctId: request.distinctId,
      deviceId: request.deviceId ?? (typeof overrides['$device_id'] === 'string' ? overrides['$device_id'] : null),
      // The service adds distinct_id to person properties (filters may target it).
      personProperties: { ...(person?.properties ?? {}), distinct_id: request.distinctId, ...overrides },
      groups: request.groups,
      groupProperties,
      groupTypeNames: definitions.groupTypeNames,
      cohorts: definitions.cohorts,
      staticCohortIds: person?.staticCohortIds ?? new Set(),
      hashKeyOverrides: person?.hashKeyOverrides ?? {},
      now: new Date(now),
      dateMargin,
    },
    { onlyKeys: request.flagKeys, availability },
  );
  let failed = false;
  for (const r of results.values()) failed ||= r.failed === true;
  return flagsResponseParts(inputs ? keepEvaluation(inputs, results, failed, dateMargin.ms) : results, failed, choice, settings);
}

/** Methods the flag endpoints answer, for CORS and Allow. */
const FLAG_METHODS = 'GET, POST, OPTIONS, HEAD';

/**
 * `POST /decide` and `POST /flags` on the bare node:http request, before Express: the SDKs'
 * hottest read, where Express's per-request work is a large share of the time. The same answer,
 * headers (CORS, X-Request-Id), metrics and error shape as the Express route, which still takes
 * every other method and any compressed (Content-Encoding) body.
 */
export function flagEvaluationFastPath(deps: DecideRouteDeps): FastPathFactory {
  return ({ app, logger, metrics }) => {
    const observe = createRequestObserver(app, metrics);
    return (req, res) => {
      if (req.method !== 'POST') return false;
      const url = req.url ?? '';
      const queryAt = url.indexOf('?');
      const path = queryAt === -1 ? url : url.slice(0, queryAt);
      const route = path === '/decide' || path === '/decide/' ? '/decide' : path === '/flags' || path === '/flags/' ? '/flags' : null;
      if (route === null) return false;
      const encoding = req.headers['content-encoding'];
      if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
      const id = observe(req, res, () => route);
      setPublicCorsHeaders(req, res, FLAG_METHODS);
      let built: Logger | null = null;
      const log = () => (built ??= logger.child({ reqId: id }));
      void (async () => {
        try {
          const raw = await readBody(req, MAX_FLAGS_BODY_BYTES);
          if (raw === null) return; // the client went away
          const query = queryAt === -1 ? {} : (querystring.parse(url.slice(queryAt + 1)) as Record<string, unknown>);
          const answer = await answerFlags(deps, route === '/decide' ? decideShape : flagsShape, {
            query,
            raw,
            contentType: req.headers['content-type'],
            ip: clientIp(req),
            log,
          });
          if (typeof answer === 'string') writeJsonText(res, 200, answer);
          else {
            res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': answer.head.length + Buffer.byteLength(answer.tail) });
            res.cork(); // one write: end() uncorks
            res.write(answer.head);
            res.end(answer.tail);
          }
        } catch (error) {
          if (error instanceof ApiError) return writeApiError(res, error);
          log().error({ err: error }, 'unhandled error');
          writeApiError(res, errors.server());
        }
      })();
      return true;
    };
  };
}

/** `/decide` and `/flags`: public flag evaluation for SDKs, authenticated by the project API key. */
export function createFlagEvaluationRouter(deps: DecideRouteDeps): Router {
  const router = Router();
  const rawBody = express.raw({ type: () => true, limit: MAX_FLAGS_BODY_BYTES, inflate: true });

  const evaluate =
    (shapeOf: (query: Record<string, unknown>) => ShapeChoice): RequestHandler =>
    async (req, res) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const answer = await answerFlags(deps, shapeOf, {
        query: req.query as Record<string, unknown>,
        raw,
        contentType: req.headers['content-type'],
        ip: clientIp(req),
        log: () => req.log,
      });
      // As res.json would send it (application/json; charset=utf-8, ETag), from the text already made.
      res.type('application/json').send(typeof answer === 'string' ? answer : `${answer.head.toString('utf8')}${answer.tail}`);
    };

  const minimal: RequestHandler = (req, res) => {
    const choice = flagsShape(req.query as Record<string, unknown>);
    res.json(buildFlagsResponse([], false, choice));
  };
  const head: RequestHandler = (_req, res) => void res.status(200).type('application/json').end();
  const notAllowed: RequestHandler = (req) => {
    throw errors.methodNotAllowed(req.method);
  };

  // CORS as for capture: decide and flags are called from browsers on any site.
  // On these paths only (not /flags/definitions, which takes a personal key).
  router.all(['/decide', '/flags'], publicCors(FLAG_METHODS));
  router.post('/decide', rawBody, evaluate(decideShape));
  router.post('/flags', rawBody, evaluate(flagsShape));
  router.head(['/decide', '/flags'], head);
  router.get(['/decide', '/flags'], minimal);
  router.all(['/decide', '/flags'], notAllowed);
  return router;
}
