import { parseLegacyFunnelActors } from './funnel-actors';
import { funnelPeopleUrl } from './funnel-people-url';

describe('a funnel step people URL and the legacy persons/funnel/ parameters', () => {
  const request = { events: [{ id: 'sign up', order: 0 }], date_from: '-7d', funnel_step: 9, limit: 5, refresh: true, breakdown: null };

  it('carries the funnel filter (lists as JSON), the step and the breakdown value, and no paging', () => {
    const url = new URL(funnelPeopleUrl(7, request, -2, ['Chrome', '95']), 'http://x');
    expect(url.pathname).toBe('/api/projects/7/persons/funnel/');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      events: JSON.stringify(request.events),
      date_from: '-7d',
      funnel_step: '-2',
      funnel_step_breakdown: '["Chrome","95"]',
    });
    expect(new URL(funnelPeopleUrl(7, request, 1, undefined), 'http://x').searchParams.has('funnel_step_breakdown')).toBe(false);
  });

  it('reads back what the URL wrote: a text that looks like a number stays a text', () => {
    const params = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);
    const read = (breakdown: unknown) => parseLegacyFunnelActors(params(funnelPeopleUrl(1, {}, 2, breakdown))).request;
    expect(read('007')).toMatchObject({ funnelStep: 2, funnelStepBreakdown: ['007'] });
    expect(read([''])).toMatchObject({ funnelStepBreakdown: [''] });
    expect(read(12)).toMatchObject({ funnelStepBreakdown: ['12'] });
    // Hand-written values: plain text, and the first custom step when no step is given.
    expect(parseLegacyFunnelActors({ funnel_step_breakdown: 'Chrome', funnel_custom_steps: '[3, 1]' }).request).toMatchObject({
      funnelStep: 3,
      funnelStepBreakdown: ['Chrome'],
    });
    expect(parseLegacyFunnelActors({ limit: '20', offset: '40' }).page).toEqual({ select: ['actor'], search: null, limit: 20, offset: 40 });
    expect(() => parseLegacyFunnelActors({ funnel_step: '[1' })).toThrow('funnel_step is not valid JSON.');
    expect(() => parseLegacyFunnelActors({ funnel_step: '-1' })).toThrow('The first valid drop-off argument for funnelStep is -2');
  });
});
