import { orderDistinctIds, personDisplayName } from './person-name';

const UUID = '0192f3c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6';

describe('personDisplayName', () => {
  it.each([
    [{ email: 'a@x.io', name: 'Ann' }, ['d1'], 'a@x.io'],
    [{ Email: 'B@x.io', name: 'Bea' }, ['d1'], 'B@x.io'],
    [{ email: '', $email: 'c@x.io' }, ['d1'], 'c@x.io'],
    [{ name: 'Dee', username: 'dee' }, ['d1'], 'Dee'],
    [{ UserName: 'eve' }, ['d1'], 'eve'],
    [{ plan: 'pro' }, ['user-7', UUID], 'user-7'],
    [{ plan: 'pro' }, [], '42'],
    [{ email: 12345 }, ['d1'], '12345'],
  ])('%j with distinct ids %j is named %s', (properties, ids, expected) => {
    expect(personDisplayName(properties, ids, 42)).toBe(expected);
  });

  it("uses the project's display-name properties instead of the defaults when it names any", () => {
    expect(personDisplayName({ email: 'a@x.io', nickname: 'ace' }, ['d1'], 42, ['nickname', 'email'])).toBe('ace');
    expect(personDisplayName({ email: 'a@x.io' }, ['d1'], 42, ['nickname'])).toBe('d1');
    expect(personDisplayName({ email: 'a@x.io' }, ['d1'], 42, [])).toBe('a@x.io');
  });
});

describe('orderDistinctIds', () => {
  it('lists ids that are not uuids first, each group in its order', () => {
    expect(orderDistinctIds([UUID, 'b', UUID.toUpperCase(), 'a'])).toEqual(['b', 'a', UUID, UUID.toUpperCase()]);
  });
});
