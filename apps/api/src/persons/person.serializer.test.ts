import { personsCsv, personsCsvSlices, type PersonJson } from './person.serializer';

const UUID = '0192f3c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6';

describe('personsCsv', () => {
  const person = (over: Partial<PersonJson>): PersonJson => ({
    type: 'person',
    id: 1,
    uuid: UUID,
    name: 'n',
    distinct_ids: ['d1'],
    properties: {},
    is_identified: false,
    created_at: '2024-01-01T00:00:00.000Z',
    ...over,
  });

  it('heads one column per property any person has, sorted, and quotes what needs it', () => {
    const csv = personsCsv([
      person({ id: 1, properties: { b: 'x,y', a: 1 }, distinct_ids: ['d1', 'd2'] }),
      person({ id: 2, properties: { c: { nested: true }, note: 'say "hi"\nbye' } }),
    ]);
    expect(csv.split('\r\n')).toEqual([
      'id,uuid,name,distinct_ids,is_identified,created_at,properties.a,properties.b,properties.c,properties.note',
      `1,${UUID},n,"d1,d2",false,2024-01-01T00:00:00.000Z,1,"x,y",,`,
      `2,${UUID},n,d1,false,2024-01-01T00:00:00.000Z,,,"{""nested"":true}","say ""hi""\nbye"`,
      '',
    ]);
  });

  it('is made in slices of about 64 KiB, the columns those of every person (or the keys given)', () => {
    const persons = Array.from({ length: 3000 }, (_, i) => person({ id: i, properties: { plan: `plan-${i}`, [`only_${i % 3}`]: i } }));
    const slices = [...personsCsvSlices(persons)];
    expect(slices.length).toBeGreaterThan(2);
    for (const slice of slices.slice(0, -1)) expect(slice.length).toBeLessThan(70 * 1024);
    const whole = slices.join('');
    expect(whole).toBe(personsCsv(persons));
    expect(whole.split('\r\n')[0]).toBe(
      'id,uuid,name,distinct_ids,is_identified,created_at,properties.only_0,properties.only_1,properties.only_2,properties.plan',
    );
    expect(whole.split('\r\n')).toHaveLength(3000 + 2);
    expect([...personsCsvSlices(persons.slice(0, 1), new Set(['plan', 'only_0', 'only_1']))].join('').split('\r\n')[0]).toBe(
      'id,uuid,name,distinct_ids,is_identified,created_at,properties.only_0,properties.only_1,properties.plan',
    );
  });

  it('is a header alone for no persons', () => {
    expect(personsCsv([])).toBe('id,uuid,name,distinct_ids,is_identified,created_at\r\n');
  });
});
