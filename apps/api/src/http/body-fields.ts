import type { RequestBodySchema } from './request-body-schema';

/**
 * JSON-schema pieces for the field kinds `drf-fields` parses, each no stricter than its parser:
 * what the schema refuses, the parser refused with the same words (request-body-schema words a
 * failure as DRF does), and the parser keeps the finer checks (blank, lengths, ranges, the input
 * limits). Unknown fields are left open, as PostHog's serializers ignore them.
 */

/** DRF CharField: a string, or a number taken as its text. */
export const charField = (description?: string): RequestBodySchema => ({ type: ['string', 'number'], ...(description ? { description } : {}) });

/** DRF BooleanField: true/false, or one of the texts and 0/1 it reads as them ("true", "yes", "1", …). */
export const booleanField: RequestBodySchema = { type: ['boolean', 'string', 'integer'] };

/** DRF IntegerField: an integer, or its text. */
export const integerField: RequestBodySchema = { type: ['integer', 'string'] };

/** A JSON object whose inside the handler checks. */
export const dictField = (description?: string): RequestBodySchema => ({ type: 'object', ...(description ? { description } : {}) });

/** A list; `items` when each item is one of these field kinds. */
export const listField = (items?: RequestBodySchema, description?: string): RequestBodySchema => ({
  type: 'array',
  ...(items ? { items } : {}),
  ...(description ? { description } : {}),
});

/** The same field, also accepting null. */
export function nullable(field: RequestBodySchema): RequestBodySchema {
  if (field['enum']) return { ...field, enum: [...(field['enum'] as unknown[]), null] };
  const type = field['type'];
  return { ...field, type: [...(Array.isArray(type) ? type : [type]), 'null'] };
}

/** A DRF ChoiceField. */
export const choiceField = (choices: readonly unknown[]): RequestBodySchema => ({ enum: [...choices] });

/** A request body: a JSON object with these fields (others allowed), `required` ones first checked. */
export const objectBody = (properties: Record<string, RequestBodySchema>, required: readonly string[] = []): RequestBodySchema => ({
  type: 'object',
  ...(required.length > 0 ? { required: [...required] } : {}),
  properties,
});

/** The body of a route that reads none (an action on the object its path names): whatever is sent is ignored. */
export const ignoredBody: RequestBodySchema = { description: 'Not read: the route acts on what its path names; a body sent is ignored' };

/**
 * A body whose route words every refusal itself (some take anything but an object as `{}`): its
 * fields described, nothing refused by the schema.
 */
export const describedBody = (description: string, fields: Record<string, string>): RequestBodySchema => ({
  type: ['object', 'array', 'string', 'number', 'boolean', 'null'],
  description,
  properties: Object.fromEntries(Object.entries(fields).map(([name, about]) => [name, { description: about }])),
});
