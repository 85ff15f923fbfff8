import { booleanField, charField, dictField, integerField, listField, nullable, objectBody } from '../http/body-fields';

/** The request bodies persons-input parses, for the route table and the API document. */

export const propertiesChangeBody = objectBody({ properties: dictField('The properties to set') }, ['properties']);

export const setPropertyBody = objectBody({ key: charField('The property'), value: { description: 'Any JSON value' } }, ['key', 'value']);

export const unsetPropertyBody = objectBody({ $unset: charField('The property') }, ['$unset']);

export const splitBody = objectBody({
  main_distinct_id: nullable(charField('The distinct id the person keeps (default: the first)')),
  max_splits: nullable(integerField),
});

// The lists' items are checked after their sizes and each other, by parseBulkDelete.
export const bulkDeleteBody = objectBody({
  delete_events: booleanField,
  distinct_ids: nullable(listField(undefined, 'Distinct ids whose persons to delete (at most 1000)')),
  ids: nullable(listField(undefined, 'Person uuids to delete (at most 1000), instead of distinct_ids')),
});
