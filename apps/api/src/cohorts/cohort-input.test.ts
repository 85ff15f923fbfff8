import { ApiError } from '@sightline/http';
import { formBody, parseCohortDefinition, readCsvMembers } from './cohort-input';

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('accepted');
}

const pro = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' };

describe('parseCohortDefinition', () => {
  it("keeps PostHog's filters shape, nested AND/OR groups and cohort filters, as the flag engine reads it", () => {
    const properties = {
      type: 'OR',
      values: [
        { type: 'AND', values: [pro, { key: 'age', value: 30, operator: 'gt', type: 'person', negation: true }] },
        { type: 'AND', values: [{ key: 'id', value: '12', type: 'cohort', negation: false }] },
      ],
    };
    expect(parseCohortDefinition({ filters: { properties } })).toEqual({
      properties: {
        type: 'OR',
        values: [
          { type: 'AND', values: [pro, { key: 'age', value: 30, operator: 'gt', type: 'person', negation: true }] },
          // A cohort id sent as text is stored as a number, operator `in` by default.
          { type: 'AND', values: [{ key: 'id', value: 12, type: 'cohort', operator: 'in' }] },
        ],
      },
    });
  });

  it('answers null without filters or groups, and filters win over groups', () => {
    expect(parseCohortDefinition({ name: 'x' })).toBeNull();
    expect(parseCohortDefinition({ filters: null, groups: [] })).toBeNull();
    expect(parseCohortDefinition({ filters: { properties: { type: 'AND', values: [pro] } }, groups: [{ properties: [{ key: 'x', value: 1 }] }] })).toEqual({
      properties: { type: 'AND', values: [pro] },
    });
  });

  it("converts legacy groups as PostHog's Cohort.properties does", () => {
    expect(
      parseCohortDefinition({
        groups: [
          // Untyped and event-typed filters were saved by old clients for person properties.
          {
            properties: [
              { key: 'plan', value: 'pro' },
              { key: 'country', value: 'US', type: 'event', operator: 'exact' },
            ],
            days: 7,
          },
          // The oldest form: {key: value}.
          { properties: { email: 'a@x.io' } },
          { properties: { type: 'OR', values: [{ key: 'id', value: 3, type: 'cohort' }] } },
        ],
      }),
    ).toEqual({
      properties: {
        type: 'OR',
        values: [
          {
            type: 'AND',
            values: [
              { key: 'plan', value: 'pro', operator: 'exact', type: 'person' },
              { key: 'country', value: 'US', operator: 'exact', type: 'person' },
            ],
          },
          { type: 'AND', values: [{ key: 'email', value: 'a@x.io', operator: 'exact', type: 'person' }] },
          { type: 'OR', values: [{ key: 'id', value: 3, operator: 'in', type: 'cohort' }] },
        ],
      },
    });
  });

  it.each<[string, Record<string, unknown>, { attr: string | null; code: string; detail?: RegExp }]>([
    [
      'a behavioural filter, by name',
      { filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }] }] } } },
      { attr: 'filters', code: 'behavioral_not_supported', detail: /behavioral/i },
    ],
    ['a legacy action group', { groups: [{ action_id: 4, days: 7 }] }, { attr: 'groups__0', code: 'behavioral_not_supported', detail: /behavioral/i }],
    ['a legacy event group', { groups: [{ event_id: '$pageview' }] }, { attr: 'groups__0', code: 'behavioral_not_supported' }],
    ['filters without properties', { filters: { groups: [] } }, { attr: 'filters', code: 'invalid', detail: /'properties'/ }],
    ['properties that are not a group', { filters: { properties: [pro] } }, { attr: 'filters', code: 'invalid' }],
    ['an empty properties object', { filters: { properties: {} } }, { attr: 'filters', code: 'invalid' }],
    [
      'an event filter',
      { filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'event' }] } } },
      { attr: 'filters__properties__values__0', code: 'not_supported' },
    ],
    [
      'a group filter',
      { filters: { properties: { type: 'AND', values: [{ key: 'n', value: 1, type: 'group', group_type_index: 0 }] } } },
      { attr: 'filters__properties__values__0', code: 'not_supported' },
    ],
    [
      'an unknown operator',
      { filters: { properties: { type: 'AND', values: [{ ...pro, operator: 'near' }] } } },
      { attr: 'filters__properties__values__0', code: 'invalid_operator' },
    ],
    [
      'a regex RE2 cannot compile',
      { filters: { properties: { type: 'AND', values: [{ ...pro, operator: 'regex', value: '(?<=a)b' }] } } },
      { attr: 'filters__properties__values__0', code: 'invalid_value' },
    ],
    [
      'a cohort filter without an id',
      { filters: { properties: { type: 'AND', values: [{ key: 'id', value: 'pro', type: 'cohort' }] } } },
      { attr: 'filters__properties__values__0', code: 'invalid_input' },
    ],
    ['a group without properties', { groups: [{ days: 3 }] }, { attr: 'groups__0__properties', code: 'invalid' }],
    ['groups that are not a list', { groups: { properties: [pro] } }, { attr: 'groups', code: 'invalid' }],
    ['a group that is not an object', { groups: ['plan'] }, { attr: 'groups__0', code: 'invalid' }],
  ])('refuses %s with a 400 naming the field', (_name, body, expected) => {
    const error = refusal(() => parseCohortDefinition(body));
    expect(error.status).toBe(400);
    expect(error.attr).toBe(expected.attr);
    expect(error.code).toBe(expected.code);
    if (expected.detail) expect(error.detail).toMatch(expected.detail);
  });
});

describe('readCsvMembers', () => {
  const csv = (text: string) => readCsvMembers(Buffer.from(text, 'utf8'));

  it('reads one column as distinct ids, the first row included, blank cells skipped', () => {
    expect(csv('d1\nd2\n\n  d3  \n,\n')).toEqual({ distinctIds: ['d1', 'd2', 'd3'] });
  });

  it('reads a single column under a person_id or email header as such', () => {
    expect(csv('person_id\nu-1\nu-2\n')).toEqual({ personUuids: ['u-1', 'u-2'] });
    expect(csv('Person .id\r\nu-1\r\n')).toEqual({ personUuids: ['u-1'] });
    expect(csv('\uFEFFE-mail\na@x.io\n')).toEqual({ emails: ['a@x.io'] });
  });

  it('finds the id column of a multi-column file: person ids, then distinct ids, then emails', () => {
    expect(csv('name,distinct_id,person_id\nAnn,d1,u-1\nBob,d2,\n')).toEqual({ personUuids: ['u-1'] });
    expect(csv('email,distinct-id\na@x.io,d1\nb@x.io,"d,2"\nshort\n')).toEqual({ distinctIds: ['d1', 'd,2'] });
    expect(csv('name,Email\nAnn,a@x.io\n')).toEqual({ emails: ['a@x.io'] });
  });

  it.each<[string, Buffer, RegExp]>([
    ['an empty file', Buffer.from('\n\n'), /empty/],
    ['a multi-column file without an id header', Buffer.from('name,plan\nAnn,pro\n'), /Found columns: name, plan/],
    ['a header and no ids', Buffer.from('person_id\n\n'), /no valid person IDs/],
    ['text that is not UTF-8', Buffer.from([0x64, 0x31, 0xff, 0xfe, 0x0a]), /UTF-8/],
    ['an unterminated quote', Buffer.from('"d1\nd2'), /format is invalid/],
  ])('refuses %s with a 400 on csv', (_name, file, detail) => {
    const error = refusal(() => readCsvMembers(file));
    expect(error).toMatchObject({ status: 400, attr: 'csv', code: 'invalid' });
    expect(error.detail).toMatch(detail);
  });
});

describe('formBody', () => {
  it('reads JSON fields of a multipart body and leaves text fields as text', () => {
    expect(formBody({ name: 'n', is_static: 'true', _create_static_person_ids: '["u-1"]', filters: '{"properties":{"type":"AND","values":[]}}' })).toEqual({
      name: 'n',
      is_static: 'true',
      _create_static_person_ids: ['u-1'],
      filters: { properties: { type: 'AND', values: [] } },
    });
  });

  it('refuses JSON it cannot read and input past the limits', () => {
    expect(refusal(() => formBody({ filters: '{' }))).toMatchObject({ status: 400, attr: 'filters', detail: 'Value must be valid JSON.' });
    expect(refusal(() => formBody({ name: 'a\u0000b' }))).toMatchObject({ status: 400, attr: 'name' });
  });
});
