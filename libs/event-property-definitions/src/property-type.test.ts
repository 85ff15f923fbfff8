import { inferPropertyType } from './property-type';

describe('inferPropertyType', () => {
  it.each([
    [42, 'Numeric'],
    [1.5, 'Numeric'],
    [true, 'Boolean'],
    ['false', 'Boolean'],
    ['TRUE', 'Boolean'],
    ['2026-03-02', 'DateTime'],
    ['2026-03-02T10:00:00Z', 'DateTime'],
    ['2026-03-02 10:00:00.123+01:00', 'DateTime'],
    ['pro', 'String'],
    ['42', 'String'],
    ['', 'String'],
    [null, null],
    [{ a: 1 }, null],
    [[1], null],
  ])('%j is %s', (value, type) => {
    expect(inferPropertyType(value)).toBe(type);
  });
});
