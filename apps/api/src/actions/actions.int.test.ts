import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const HOUR = 3_600_000;

/** Autocapture chains as posthog-js produces them (the clicked element first). */
const BUY_BUTTON =
  'button.btn.primary:attr__class="btn primary"attr__id="buy"attr_id="buy"nth-child="1"nth-of-type="1"text="Buy now";form.checkout:nth-child="2"nth-of-type="1";body:nth-child="1"nth-of-type="1"';
const PRICING_LINK = 'a.nav:attr__href="/pricing"href="/pricing"nth-child="3"nth-of-type="2"text="Pricing";nav:nth-child="1"nth-of-type="1"';

interface Sent {
  event: string;
  url?: string;
  chain?: string;
  plan?: string;
}

const SENT: Sent[] = [
  { event: '$autocapture', url: 'https://shop.test/checkout', chain: BUY_BUTTON, plan: 'pro' },
  { event: '$autocapture', url: 'https://shop.test/checkout?step=2', chain: BUY_BUTTON, plan: 'free' },
  { event: '$autocapture', url: 'https://shop.test/', chain: PRICING_LINK },
  { event: '$pageview', url: 'https://shop.test/checkout' },
  { event: '$pageview', url: 'https://shop.test/pricing' },
  { event: 'purchase', plan: 'pro' },
];

describe('actions: CRUD and action series in trends', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const base = '/api/projects/1/actions';

  beforeAll(async () => {
    f = await createFlagFixture('actions', () => NOW);
    await insertEvents(
      f.ch,
      SENT.map((s, i) => ({
        ...testEventRow({
          event: s.event,
          atMs: NOW - (i + 1) * HOUR,
          properties: { ...(s.url ? { $current_url: s.url } : {}), ...(s.plan ? { plan: s.plan } : {}) },
        }),
        elements_chain: s.chain ?? '',
      })),
    );
    await f.addKey('phx_action_reader', ['action:read', 'insight:read']);
  });
  afterAll(() => f.close());

  /** The count of an action series over the default range (-7d). */
  const countOf = async (steps: unknown[]) => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: `a${Math.random()}`, steps });
    expect(created.status).toBe(201);
    const trend = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ actions: [{ id: created.body.id, type: 'actions' }] });
    expect(trend.status).toBe(200);
    return trend.body.result[0].count as number;
  };
  const expected = (match: (s: Sent) => boolean) => SENT.filter(match).length;

  it('matches steps by event, URL, element and properties, ORing the steps', async () => {
    expect(await countOf([{ event: '$pageview', url: '/checkout' }])).toBe(expected((s) => s.event === '$pageview' && !!s.url?.includes('/checkout')));
    expect(await countOf([{ event: '$pageview', url: 'https://shop.test/pricing', url_matching: 'exact' }])).toBe(1);
    expect(await countOf([{ event: '$autocapture', url: 'checkout\\?step=\\d', url_matching: 'regex' }])).toBe(1);
    expect(await countOf([{ event: '$autocapture', selector: 'form.checkout button.primary' }])).toBe(expected((s) => s.chain === BUY_BUTTON));
    expect(await countOf([{ event: '$autocapture', selector: '#buy' }])).toBe(2);
    expect(await countOf([{ event: '$autocapture', selector: 'nav > a' }])).toBe(1);
    expect(await countOf([{ event: '$autocapture', text: 'Buy now' }])).toBe(2);
    expect(await countOf([{ event: '$autocapture', text: 'Pric', text_matching: 'contains' }])).toBe(1);
    expect(await countOf([{ event: '$autocapture', href: '/pricing' }])).toBe(1);
    expect(await countOf([{ event: '$autocapture', selector: 'button', properties: [{ key: 'plan', value: 'pro', type: 'event' }] }])).toBe(1);
    expect(await countOf([{ event: 'purchase' }, { event: '$pageview', url: 'pricing' }])).toBe(2);
    expect(await countOf([])).toBe(0);
  });

  it('labels an action series with the action name and applies element filters on events series', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Bought', steps: [{ event: 'purchase' }] });
    const trend = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ actions: [{ id: created.body.id }], events: [{ id: '$autocapture', properties: [{ key: 'text', value: 'Buy now', type: 'element' }] }] });
    expect(trend.body.result.map((s: { label: string; count: number }) => [s.label, s.count])).toEqual([
      ['$autocapture', 2],
      ['Bought', 1],
    ]);
  });

  it('lists, reads, updates and soft-deletes; names stay unique', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Signed up', description: 'd', tags: ['growth'], steps: [{ event: 'signup' }] });
    expect(created.body).toMatchObject({
      name: 'Signed up',
      tags: ['growth'],
      is_action: true,
      deleted: false,
      team_id: 1,
      created_by: { id: f.adminUserId },
      steps: [{ event: 'signup', url: null, url_matching: null, selector: null, text: null, href: null, properties: null }],
    });
    const duplicate = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Signed up' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({ attr: 'name', code: 'unique' });
    const renamed = await request(f.app).patch(`${base}/${created.body.id}/`).set(admin).send({ name: 'Joined' });
    expect(renamed.body.name).toBe('Joined');
    expect((await request(f.app).get(`${base}/?search=join`).set(admin)).body.results.map((a: { id: number }) => a.id)).toEqual([created.body.id]);
    expect((await request(f.app).delete(`${base}/${created.body.id}/`).set(admin)).status).toBe(405);
    expect((await request(f.app).patch(`${base}/${created.body.id}/`).set(admin).send({ deleted: true })).body.deleted).toBe(true);
    const trend = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ actions: [{ id: created.body.id }] });
    expect(trend.status).toBe(400);
    expect(trend.body).toMatchObject({ code: 'action_does_not_exist', attr: 'actions' });
  });

  it.each([
    [{ steps: 'x' }, 'steps', 'not_a_list'],
    [{ steps: [{ url: '(', url_matching: 'regex' }] }, 'steps__0__url', 'invalid_value'],
    [{ steps: [{ url: 'x', url_matching: 'sometimes' }] }, 'steps__0__url_matching', 'invalid_choice'],
    [{ steps: [{ selector: 'div:has(a)' }] }, 'steps__0__selector', 'invalid_value'],
    [{ steps: [{ properties: [{ key: 'a', operator: 'near', value: 1 }] }] }, 'steps__0__properties__0', 'invalid_operator'],
    [{ steps: [{ event: 5 }] }, 'steps__0__event', 'invalid'],
  ])('refuses %j with a 400 naming %s', async (body, attr, code) => {
    const res = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: `bad ${attr} ${code}`, ...body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
  });

  it('requires action:write to write and keeps other projects’ actions out of reach', async () => {
    expect((await request(f.app).post(`${base}/`).set(bearer('phx_action_reader')).send({ name: 'nope' })).status).toBe(403);
    expect((await request(f.app).get(`${base}/`).set(bearer('phx_action_reader'))).status).toBe(200);
    expect((await request(f.app).get(`${base}/99999/`).set(admin)).status).toBe(404);
  });
});
