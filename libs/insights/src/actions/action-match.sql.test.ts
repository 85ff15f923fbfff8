import { eventsTablePropertiesColumn, QueryParams, type CompileContext } from '@sightline/properties';
import { compileActionMatch } from './action-match.sql';
import { parseActionSteps, type ActionDefinition } from './action-steps';

const NOW = Date.parse('2024-01-10T15:00:00Z');

function compile(steps: unknown[], ctx: Partial<CompileContext> = {}) {
  const params = new QueryParams();
  const action: ActionDefinition = { id: 1, name: 'a', steps: parseActionSteps(steps, 'steps') };
  const sql = compileActionMatch(action, { params, nowMs: NOW, propertiesColumn: eventsTablePropertiesColumn, ...ctx });
  return { sql, params: params.values };
}

describe('compileActionMatch', () => {
  it('matches nothing without steps, and every event for a step without conditions', () => {
    expect(compile([]).sql).toBe('0');
    expect(compile([{}]).sql).toBe('(1)');
  });

  it('binds every value a step holds', () => {
    const hostile = "x'); DROP TABLE events; --";
    const { sql, params } = compile([
      {
        event: hostile,
        url: hostile,
        selector: `a[title="${hostile}"]`,
        text: hostile,
        href: hostile,
        tag_name: hostile,
        properties: [{ key: hostile, value: hostile }],
      },
    ]);
    expect(sql).not.toContain('DROP');
    expect(Object.values(params).some((v) => String(v).includes('DROP'))).toBe(true);
  });

  it('applies element conditions to $autocapture steps only, as PostHog does', () => {
    expect(compile([{ event: 'click', selector: 'button', text: 'Buy', href: '/x', tag_name: 'a' }])).toEqual({
      sql: '(event = {p0:String})',
      params: { p0: 'click' },
    });
  });

  // Normalised snapshots of the SQL shapes: every matching mode, several steps ORed, and the
  // columns taken from the query's context.
  it.each<[string, unknown[], Partial<CompileContext>]>([
    ['a URL per matching mode', [{ url: '/a' }, { url: 'https://x.io/b', url_matching: 'exact' }, { url: '^https://x\\.io/c$', url_matching: 'regex' }], {}],
    [
      'an autocapture step with every element condition',
      [
        { event: '$autocapture', selector: 'form > button.primary', tag_name: 'button' },
        { event: '$autocapture', text: 'Buy', text_matching: 'contains', href: '^/p', href_matching: 'regex' },
        { event: '$autocapture', text: 'Buy now', href: '/pricing' },
      ],
      {},
    ],
    [
      'properties of every kind, with the context’s columns',
      [
        {
          event: 'purchase',
          properties: [
            { key: 'plan', value: 'pro' },
            { key: 'email', value: '@x.io', operator: 'icontains', type: 'person' },
            { key: 'text', value: 'Buy', type: 'element' },
          ],
        },
      ],
      {
        propertiesColumn: (filter) => ((filter.type ?? 'event') === 'event' ? 'e.properties' : filter.type === 'person' ? 'e.person_properties' : null),
        elementsChainColumn: 'e.elements_chain',
      },
    ],
  ])('%s', (_name, steps, ctx) => {
    expect(compile(steps, ctx)).toMatchSnapshot();
  });

  it('still takes the columns as the second argument (the call shape before the context came first)', () => {
    const params = new QueryParams();
    const ctx: CompileContext = { params, nowMs: NOW, propertiesColumn: eventsTablePropertiesColumn };
    const sql = compileActionMatch(
      { id: 1, name: 'a', steps: parseActionSteps([{ event: '$autocapture', url: '/x', text: 'Buy' }], 'steps') },
      { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' },
      ctx,
    );
    expect(sql).toContain('e.event = {p0:String}');
    expect(sql).toContain('extractAll(e.elements_chain, \'(?::|")text="(.*?)"\')');
    expect(sql).toContain('JSONExtractString(e.properties, {p2:String})');
  });
});
