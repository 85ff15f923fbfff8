import { errors } from '@sightline/http';
import { parsePropertyFilters, PropertyFilterError, type ParseOptions, type PropertyGroup } from '@sightline/properties';

/** A `properties` query parameter (JSON text of a filter list or a property group), or a DRF 400 naming the field. */
export function parsePropertiesParam(text: string | null, options: ParseOptions, attr = 'properties'): PropertyGroup {
  if (text === null) return { type: 'AND', values: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.validation('Properties are not valid JSON.', attr, 'parse_error');
  }
  try {
    return parsePropertyFilters(value, attr, options);
  } catch (error) {
    if (error instanceof PropertyFilterError) throw errors.validation(error.message, error.attr, error.code);
    throw error;
  }
}
