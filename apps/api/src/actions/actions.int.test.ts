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

  it('creates with PostHog’s serializer fields, reads, lists, updates and soft-deletes', async () => {
    const created = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: 'Signed up', description: 'd', tags: ['growth'], steps: [{ event: 'signup' }, { event: '$autocapture', selector: 'nav > a' }] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Signed up',
      description: 'd',
      tags: ['growth'],
      post_to_slack: false,
      slack_message_format: '',
      steps: [
        {
          event: 'signup',
          properties: null,
          selector: null,
          selector_regex: null,
          tag_name: null,
          text: null,
          text_matching: null,
          href: null,
          href_matching: null,
          url: null,
          // PostHog's default, stored whether or not the step has a URL.
          url_matching: 'contains',
        },
        expect.objectContaining({ selector: 'nav > a', selector_regex: '(^|;)a[^;]*?($|;|:([^;^\\s]*(;|$|\\s)))nav[^;]*?($|;|:([^;^\\s]*(;|$|\\s))).*' }),
      ],
      created_at: expect.any(String),
      created_by: expect.objectContaining({ id: f.adminUserId, email: expect.any(String) }),
      deleted: false,
      is_calculating: false,
      last_calculated_at: created.body.created_at,
      team_id: 1,
      is_action: true,
      bytecode_error: null,
      pinned_at: null,
      creation_context: null,
    });
    const id = created.body.id as number;
    // The same action under /environments/, and in the list (PostHog's paginated shape).
    expect((await request(f.app).get(`/api/environments/1/actions/${id}/`).set(admin)).body).toEqual(created.body);
    const listed = await request(f.app).get(`${base}/?search=signed`).set(admin);
    expect(listed.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(listed.body.results.map((a: { id: number }) => a.id)).toEqual([id]);

    const patched = await request(f.app)
      .patch(`${base}/${id}/`)
      .set(admin)
      .send({ name: 'Joined', steps: [{ event: 'joined', url: '/welcome', url_matching: 'exact' }] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Joined',
      description: 'd',
      tags: ['growth'],
      steps: [{ event: 'joined', url: '/welcome', url_matching: 'exact' }],
    });
    expect(patched.body.steps).toHaveLength(1);

    // PostHog refuses hard deletes whichever id is named; a PATCH of deleted=true removes one.
    expect((await request(f.app).delete(`${base}/${id}/`).set(admin)).status).toBe(405);
    expect((await request(f.app).delete(`${base}/99999/`).set(admin)).status).toBe(405);
    expect((await request(f.app).patch(`${base}/${id}/`).set(admin).send({ deleted: true })).body.deleted).toBe(true);
    expect((await request(f.app).get(`${base}/?search=joined`).set(admin)).body).toMatchObject({ count: 0, results: [] });
    // Still readable by id (PostHog answers deleted actions by id), but no longer usable in a trend.
    expect((await request(f.app).get(`${base}/${id}/`).set(admin)).body).toMatchObject({ id, deleted: true });
    const trend = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ actions: [{ id }] });
    expect(trend.status).toBe(400);
    expect(trend.body).toMatchObject({ code: 'action_does_not_exist', attr: 'actions' });
  });

  it('keeps names unique among the project’s live actions', async () => {
    const first = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Unique' });
    const duplicate = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Unique' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: `This project already has an action with this name, ID ${first.body.id}`,
      attr: 'name',
    });
    const other = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Other' });
    expect((await request(f.app).patch(`${base}/${other.body.id}/`).set(admin).send({ name: 'Unique' })).body).toMatchObject({ code: 'unique' });
    // Renaming an action to its own name is no clash; a deleted action frees its name.
    expect((await request(f.app).patch(`${base}/${first.body.id}/`).set(admin).send({ name: 'Unique' })).status).toBe(200);
    await request(f.app).patch(`${base}/${first.body.id}/`).set(admin).send({ deleted: true });
    expect((await request(f.app).post(`${base}/`).set(admin).send({ name: 'Unique' })).status).toBe(201);
  });

  it('creates one of concurrent actions with one name and answers the others 400; an undelete cannot duplicate a name', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => request(f.app).post(`${base}/`).set(admin).send({ name: 'Raced' })));
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, a.body.code, a.body.attr])).toEqual(refused.map(() => [400, 'unique', 'name']));
    const live = await f.db.query<{ id: number }>("SELECT id FROM actions WHERE team_id = 1 AND name = 'Raced' AND NOT deleted");
    expect(live.map((r) => r.id)).toEqual([created[0]!.body.id]);

    // A deleted action whose name was taken meanwhile cannot come back under it.
    await request(f.app).patch(`${base}/${created[0]!.body.id}/`).set(admin).send({ deleted: true });
    const successor = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Raced' });
    expect(successor.status).toBe(201);
    const undelete = await request(f.app).patch(`${base}/${created[0]!.body.id}/`).set(admin).send({ deleted: false });
    expect(undelete.body).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: `This project already has an action with this name, ID ${successor.body.id}`,
      attr: 'name',
    });
  });

  it('pages the list with limit and offset', async () => {
    for (const name of ['Page a', 'Page b', 'Page c']) await request(f.app).post(`${base}/`).set(admin).send({ name });
    const first = await request(f.app).get(`${base}/?search=page&limit=2`).set(admin);
    expect(first.body.count).toBe(3);
    expect(first.body.results).toHaveLength(2);
    expect(first.body.next).toMatch(/limit=2&offset=2|offset=2&limit=2/);
    const second = await request(f.app).get(`${base}/?search=page&limit=2&offset=2`).set(admin);
    expect(second.body.results).toHaveLength(1);
    const names = [...first.body.results, ...second.body.results].map((a: { name: string }) => a.name);
    // Newest first, as PostHog orders them.
    expect(names).toEqual(['Page c', 'Page b', 'Page a']);
  });

  it('requires a name', async () => {
    const res = await request(f.app).post(`${base}/`).set(admin).send({ steps: [] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'name' });
  });

  it.each([
    [{ name: '  ' }, 'name', 'blank'],
    [{ name: 'x'.repeat(401) }, 'name', 'max_length'],
    [{ steps: 'x' }, 'steps', 'not_a_list'],
    [{ steps: null }, 'steps', 'null'],
    [{ steps: [{ url: '(', url_matching: 'regex' }] }, 'steps__0__url', 'invalid_value'],
    [{ steps: [{ url: 'x', url_matching: 'sometimes' }] }, 'steps__0__url_matching', 'invalid_choice'],
    [{ steps: [{ href: 'a(?=b)', href_matching: 'regex' }] }, 'steps__0__href', 'invalid_value'],
    [{ steps: [{ properties: [{ key: 'a', operator: 'near', value: 1 }] }] }, 'steps__0__properties__0', 'invalid_operator'],
    [{ steps: [{ properties: [{ key: 'selector', value: 'a', operator: 'regex', type: 'element' }] }] }, 'steps__0__properties__0', 'not_supported'],
    [{ steps: [{ event: true }] }, 'steps__0__event', 'invalid'],
    [{ tags: 'growth' }, 'tags', 'not_a_list'],
  ])('refuses %j with a 400 naming %s', async (body, attr, code) => {
    const res = await request(f.app)
      .post(`${base}/`)
      .set(admin)
      .send({ name: `bad ${attr} ${code}`, ...body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
  });

  it('requires action:read to read and action:write to write', async () => {
    await f.addKey('phx_action_none', ['insight:read']);
    const created = await request(f.app).post(`${base}/`).set(admin).send({ name: 'Scoped' });
    expect((await request(f.app).get(`${base}/`).set(bearer('phx_action_none'))).status).toBe(403);
    expect((await request(f.app).get(`${base}/${created.body.id}/`).set(bearer('phx_action_none'))).status).toBe(403);
    expect((await request(f.app).get(`${base}/`).set(bearer('phx_action_reader'))).status).toBe(200);
    expect((await request(f.app).get(`${base}/${created.body.id}/`).set(bearer('phx_action_reader'))).status).toBe(200);
    expect((await request(f.app).post(`${base}/`).set(bearer('phx_action_reader')).send({ name: 'nope' })).status).toBe(403);
    expect((await request(f.app).patch(`${base}/${created.body.id}/`).set(bearer('phx_action_reader')).send({ name: 'nope' })).status).toBe(403);
    expect((await request(f.app).delete(`${base}/${created.body.id}/`).set(bearer('phx_action_reader'))).status).toBe(403);
  });

  it('keeps another project’s actions out of reach', async () => {
    const [project] = await f.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'second', 'phc_second_actions') RETURNING id",
      [f.organizationId],
    );
    const theirs = await request(f.app)
      .post(`/api/projects/${project!.id}/actions/`)
      .set(admin)
      .send({ name: 'Theirs', steps: [{ event: 'x' }] });
    expect(theirs.status).toBe(201);
    expect(theirs.body.team_id).toBe(project!.id);
    expect((await request(f.app).get(`${base}/${theirs.body.id}/`).set(admin)).status).toBe(404);
    expect((await request(f.app).patch(`${base}/${theirs.body.id}/`).set(admin).send({ deleted: true })).status).toBe(404);
    expect((await request(f.app).get(`${base}/?search=theirs`).set(admin)).body.count).toBe(0);
    // The same name in another project is no clash.
    expect((await request(f.app).post(`${base}/`).set(admin).send({ name: 'Theirs' })).status).toBe(201);
    // Nor can a trend here use it.
    const trend = await request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ actions: [{ id: theirs.body.id }] });
    expect(trend.body).toMatchObject({ code: 'action_does_not_exist' });
    expect((await request(f.app).get(`${base}/99999/`).set(admin)).status).toBe(404);
    expect((await request(f.app).get(`${base}/abc/`).set(admin)).status).toBe(404);
  });
});
