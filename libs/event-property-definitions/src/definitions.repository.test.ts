import { collectDefinitionSightings, mergeDefinitionSightings } from './definitions.repository';

describe('collectDefinitionSightings', () => {
  it('counts each name once per event and project, with the first value that says a type', () => {
    const sightings = collectDefinitionSightings([
      { teamId: 2, event: 'b', properties: { price: null, $set: { plan: 'pro' }, $groups: { company: 'x' } } },
      { teamId: 1, event: 'a', properties: { price: 3 } },
      { teamId: 2, event: 'b', properties: { price: 'free', $set_once: { plan: 1 } } },
    ]);
    expect(sightings.events).toEqual([
      { teamId: 1, name: 'a', volume: 1 },
      { teamId: 2, name: 'b', volume: 2 },
    ]);
    expect(sightings.properties).toEqual([
      { teamId: 1, type: 1, name: 'price', propertyType: 'Numeric', volume: 1 },
      { teamId: 2, type: 1, name: 'price', propertyType: 'String', volume: 2 },
      { teamId: 2, type: 2, name: 'plan', propertyType: 'String', volume: 2 },
    ]);
  });

  it('skips empty and over-long names', () => {
    const sightings = collectDefinitionSightings([{ teamId: 1, event: 'e'.repeat(201), properties: { '': 1, ['k'.repeat(201)]: 1 } }]);
    expect(sightings).toEqual({ events: [], properties: [] });
  });
});

describe('mergeDefinitionSightings', () => {
  it('equals the sightings of both batches collected at once', () => {
    const first = [
      { teamId: 2, event: 'b', properties: { price: null, $set: { plan: 'pro' } } },
      { teamId: 1, event: 'a', properties: { price: 3 } },
    ];
    const second = [
      { teamId: 2, event: 'b', properties: { price: 'free', $set_once: { plan: 1 } } },
      { teamId: 1, event: 'c', properties: { size: true } },
    ];
    expect(mergeDefinitionSightings(collectDefinitionSightings(first), collectDefinitionSightings(second))).toEqual(
      collectDefinitionSightings([...first, ...second]),
    );
  });
});
