import Ajv, { type ValidateFunction } from 'ajv';
import type { RawEvent } from './capture-payload';

/** Why an event of an accepted request is not ingested (a metric label; the request still answers 200). */
export type DropReason = 'not_an_object' | 'missing_event_name' | 'invalid_properties' | 'missing_distinct_id' | 'empty_distinct_id' | 'nested_too_deeply';

/**
 * The shape every ingested event must have, compiled once, at the first event rather than at
 * import (an ajv instance and a compile are tens of milliseconds of a service's start). The
 * distinct id is checked in code after it (it may come from `distinct_id`, `$distinct_id` or
 * `properties.distinct_id`, and is stringified), so the schema holds only what JSON Schema
 * says directly.
 */
let validateShape: ValidateFunction<RawEvent> | undefined;
const compileShape = () =>
  new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }).compile<RawEvent>({
    type: 'object',
    required: ['event'],
    properties: {
      event: { type: 'string', minLength: 1 },
      properties: { type: ['object', 'null'] },
    },
  });

/** null when the event has the ingestible shape, else the drop reason. */
export function eventShapeProblem(raw: unknown): DropReason | null {
  validateShape ??= compileShape();
  if (validateShape(raw)) return null;
  const error = validateShape.errors?.[0];
  if (!error || (error.instancePath === '' && error.keyword === 'type')) return 'not_an_object';
  if (error.instancePath === '/properties') return 'invalid_properties';
  return 'missing_event_name';
}
