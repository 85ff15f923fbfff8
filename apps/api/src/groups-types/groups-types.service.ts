import { errors } from '@sightline/http';
import type { MetadataStore } from '@sightline/postgres';
import { MAX_GROUP_TYPE_INDEX } from '@sightline/properties';
import { parseBody, parseInteger, parseList, parseString, pythonType } from '../http/drf-fields';
import { findGroupType, listGroupTypes, updateGroupTypeDefaultColumns, updateGroupTypeNames, type GroupTypeRow } from './groups-types.repository';

/** PostHog's GroupTypeMapping.name_singular / name_plural max_length. */
const NAME_MAX_LENGTH = 400;
/** A project has at most five group types, so a longer update list can only repeat them. */
const MAX_METADATA_ROWS = MAX_GROUP_TYPE_INDEX + 1;
const MAX_DEFAULT_COLUMNS = 100;
const COLUMN_MAX_LENGTH = 400;

const groupTypeNotFound = () => errors.notFound('Group type not found');

const groupTypeIndexOf = (value: unknown, attr: string) => {
  if (value === undefined) throw errors.validation('This field is required.', attr, 'required');
  return parseInteger(value, attr, { min: 0, max: MAX_GROUP_TYPE_INDEX });
};

/** A name field: text (blank allowed), or null to clear it. */
const nameOf = (value: unknown, attr: string) => (value === null ? null : parseString(value, attr, { allowBlank: true, maxLength: NAME_MAX_LENGTH }));

interface NamesChange {
  index: number;
  names: { name_singular?: string | null; name_plural?: string | null };
}

/** PostHog's update_metadata body: a list of `{group_type_index, name_singular?, name_plural?}`; `group_type` is read-only and ignored. */
function parseMetadataRows(body: unknown): NamesChange[] {
  if (!Array.isArray(body)) throw errors.validation(`Expected a list of items but got type "${pythonType(body)}".`, null, 'not_a_list');
  const rows: unknown[] = body;
  if (rows.length > MAX_METADATA_ROWS) throw errors.validation(`Ensure this field has no more than ${MAX_METADATA_ROWS} elements.`, null, 'max_length');
  return rows.map((raw, i) => {
    const row = parseBody(raw);
    const change: NamesChange = { index: groupTypeIndexOf(row['group_type_index'], `${i}__group_type_index`), names: {} };
    if ('name_singular' in row) change.names.name_singular = nameOf(row['name_singular'], `${i}__name_singular`);
    if ('name_plural' in row) change.names.name_plural = nameOf(row['name_plural'], `${i}__name_plural`);
    return change;
  });
}

/** Renames group types (all or none), then answers every type of the project, as PostHog's update_metadata does. */
export async function updateGroupTypesMetadata(db: MetadataStore, teamId: number, body: unknown): Promise<GroupTypeRow[]> {
  const changes = parseMetadataRows(body);
  await db.transaction(async (tx) => {
    for (const change of changes) {
      if (!(await updateGroupTypeNames(tx, teamId, change.index, change.names))) throw groupTypeNotFound();
    }
  });
  return listGroupTypes(db, teamId);
}

/** PostHog's set_default_columns: `{group_type_index, default_columns}` (a list of column names, or null). */
export async function setGroupTypeDefaultColumns(db: MetadataStore, teamId: number, body: unknown): Promise<GroupTypeRow> {
  const fields = parseBody(body);
  const index = groupTypeIndexOf(fields['group_type_index'], 'group_type_index');
  let columns: string[] | null = null;
  if (fields['default_columns'] === undefined) throw errors.validation('This field is required.', 'default_columns', 'required');
  if (fields['default_columns'] !== null) {
    const list = parseList(fields['default_columns'], 'default_columns');
    if (list.length > MAX_DEFAULT_COLUMNS)
      throw errors.validation(`Ensure this field has no more than ${MAX_DEFAULT_COLUMNS} elements.`, 'default_columns', 'max_length');
    columns = list.map((column, i) => parseString(column, `default_columns__${i}`, { maxLength: COLUMN_MAX_LENGTH }));
  }
  if (!(await updateGroupTypeDefaultColumns(db, teamId, index, columns))) throw groupTypeNotFound();
  return (await findGroupType(db, teamId, index))!;
}
