import type { Request } from 'express';
import { ApiError } from '@sightline/http';
import { MAX_BULK_DELETE, parseBulkDelete, parseListFilters, parseListPage, parsePersonRef, parseSetProperty, parseSplit } from './persons-input';

const UUID = '0192f3c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6';
const requestWith = (query: Record<string, unknown>) => ({ query }) as unknown as Request;

/** The DRF error a parse throws: its status, code and attr. */
function refusal(parse: () => unknown): { status: number; code: string; attr: string | null; detail: string } {
  try {
    parse();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, attr: error.attr, detail: error.detail };
    throw error;
  }
  throw new Error('parsed without refusing');
}

describe('parsePersonRef', () => {
  it('takes a uuid or an integer id, nothing else', () => {
    expect(parsePersonRef(UUID)).toEqual({ uuid: UUID });
    expect(parsePersonRef('42')).toEqual({ id: '42' });
    expect(parsePersonRef('user-1')).toBeNull();
    expect(parsePersonRef('1'.repeat(19))).toBeNull();
  });
});

describe('parseListFilters and parseListPage', () => {
  it('reads the filters, the first of a repeated parameter, empty ones as absent', () => {
    const filters = parseListFilters(requestWith({ cohort: '3', distinct_id: ['d1', 'd2'], email: '', search: 'ann' }));
    expect(filters).toMatchObject({ cohortId: 3, distinctId: 'd1', email: null, search: 'ann' });
    expect(refusal(() => parseListFilters(requestWith({ cohort: 'x' })))).toMatchObject({ status: 400, attr: 'cohort', code: 'invalid' });
  });

  it('bounds the page and keeps only a snapshot id that is an integer', () => {
    expect(parseListPage(requestWith({}))).toEqual({ limit: 100, offset: 0, through: null });
    expect(parseListPage(requestWith({ limit: '5', offset: '10', persons_through: '77' }))).toEqual({ limit: 5, offset: 10, through: '77' });
    expect(parseListPage(requestWith({ persons_through: '77; DROP' })).through).toBeNull();
  });
});

describe('parseBulkDelete', () => {
  it('takes distinct ids, or ids split into uuids and integer ids', () => {
    expect(parseBulkDelete({ distinct_ids: ['a', 'b'], delete_events: true })).toEqual({ deleteEvents: true, targets: { distinctIds: ['a', 'b'] } });
    expect(parseBulkDelete({ ids: [UUID, '12', 'junk'] })).toEqual({ deleteEvents: false, targets: { uuids: [UUID], ids: ['12'] } });
  });

  it('refuses both, neither, too many, and a distinct id that is not text', () => {
    expect(refusal(() => parseBulkDelete({ distinct_ids: ['a'], ids: ['1'] })).detail).toBe('You must provide either distinct_ids or ids, not both');
    expect(refusal(() => parseBulkDelete({})).detail).toBe('You need to specify either distinct_ids or ids');
    expect(refusal(() => parseBulkDelete({ ids: Array.from({ length: MAX_BULK_DELETE + 1 }, (_, i) => String(i)) })).detail).toBe(
      `You can only pass ${MAX_BULK_DELETE} ids in one call`,
    );
    expect(refusal(() => parseBulkDelete({ distinct_ids: ['a', { id: 7 }] }))).toMatchObject({ status: 400, attr: 'distinct_ids__1' });
  });
});

describe('property and split bodies', () => {
  it('requires key and value, null a value like any other', () => {
    expect(parseSetProperty({ key: 'plan', value: null })).toEqual({ key: 'plan', value: null });
    expect(refusal(() => parseSetProperty({ key: 'plan' }))).toMatchObject({ attr: 'value', code: 'required' });
  });

  it('reads an empty main distinct id as none and refuses max_splits below 1', () => {
    expect(parseSplit({ main_distinct_id: '' })).toEqual({ mainDistinctId: null, maxSplits: null });
    expect(parseSplit({ main_distinct_id: 'a', max_splits: 2 })).toEqual({ mainDistinctId: 'a', maxSplits: 2 });
    expect(refusal(() => parseSplit({ max_splits: 0 }))).toMatchObject({ status: 400, attr: 'max_splits' });
  });
});
