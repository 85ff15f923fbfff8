import { createTestStores, insertJourneys, journeyTimeMs, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { parseTrendFilter } from './trend-filter';
import { createQueryService, type QueryService } from '../runners/query-service';
import { BREAKDOWN_NULL } from '../common/events-sql';

/**
 * PostHog's virtual person properties in trends: `$virt_initial_channel_type` and
 * `$virt_initial_referring_domain_type`, derived from the person's `$initial_…` properties.
 * Cases from posthog/hogql_queries/insights/trends/test/test_trends.py and
 * posthog/hogql/database/schema/test/test_channel_type.py (there read from the persons table
 * with HogQL; here each case is a person whose sign up is broken down by the property).
 */

const TEAM = { trends: 9201, channels: 9202, sessions: 9203 };

/** test_channel_type.py's `_get_session_channel_type` cases: an event's properties and the session's channel type. */
const SESSION_CASES: [test: string, properties: Record<string, unknown>, expected: string][] = [
  ['test_empty_session', {}, 'Unknown'],
  ['test_empty_string_session', { utm_source: '', utm_medium: '', utm_campaign: '', referring_domain: '', gclid: '', gad_source: '' }, 'Unknown'],
  [
    'test_zendesk_ticket_14945',
    { utm_source: 'Facebook', utm_medium: 'Paid', utm_campaign: 'Foo', referring_domain: 'l.facebook.com', gclid: '', gad_source: '' },
    'Paid Social',
  ],
  ['test_zendesk_ticket_14945', { utm_source: 'Foo', utm_medium: 'affiliate', $referring_domain: 'bing.com' }, 'Affiliate'],
  ['test_zendesk_ticket_14945', { utm_source: 'Foo', utm_medium: 'partnership', $referring_domain: 'foo.com' }, 'Affiliate'],
  [
    'test_hacker_news',
    {
      utm_source: '',
      utm_medium: 'in-product',
      utm_campaign: 'empty-state-docs-link',
      $referring_domain: 'news.ycombinator.com',
      gclid: '',
      gad_source: '',
    },
    'Organic Social',
  ],
  [
    'test_hacker_news',
    {
      utm_source: 'news.ycombinator.com',
      utm_medium: 'in-product',
      utm_campaign: 'empty-state-docs-link',
      $referring_domain: '$direct',
      gclid: '',
      gad_source: '',
    },
    'Organic Social',
  ],
  ['test_google_plus', { utm_source: 'plus.google.com', $referring_domain: '$direct' }, 'Organic Social'],
  ['test_google_plus', { $referring_domain: 'plus.google.com' }, 'Organic Social'],
  ['test_gmail_app', { $referring_domain: 'com.google.android.gm' }, 'Email'],
];
const NOW = '2020-01-04T13:01:01Z';

/** test_channel_type.py's persons: the case name and the person's properties. */
const CHANNEL_CASES: Record<string, Record<string, unknown>> = {
  test_direct: { $initial_referring_domain: '$direct' },
  test_direct_empty_string: {
    $initial_referring_domain: '$direct',
    $initial_utm_source: '',
    $initial_utm_medium: '',
    $initial_utm_campaign: '',
    $initial_gclid: '',
    $initial_gad_source: '',
  },
  test_direct_null_string: {
    $initial_referring_domain: '$direct',
    $initial_utm_source: 'null',
    $initial_utm_medium: 'null',
    $initial_utm_campaign: 'null',
    $initial_gclid: 'null',
    $initial_gad_source: 'null',
  },
  test_cross_network: { $initial_referring_domain: '$direct', $initial_utm_campaign: 'cross-network' },
  test_paid_shopping_domain: { $initial_referring_domain: 'www.ebay.co.uk', $initial_utm_medium: 'ppc' },
  test_paid_shopping_source: { $initial_utm_source: 'ebay', $initial_utm_medium: 'ppc' },
  test_paid_shopping_campaign: { $initial_utm_campaign: 'shopping', $initial_utm_medium: 'ppc' },
  test_paid_search: { $initial_referring_domain: 'www.google.co.uk', $initial_gclid: 'some-gclid' },
  test_paid_search_source: { $initial_utm_source: 'yahoo', $initial_utm_medium: 'ppc' },
  test_paid_video: { $initial_referring_domain: 'youtube.com', $initial_utm_medium: 'cpc' },
  test_paid_video_source: { $initial_utm_source: 'youtube.com', $initial_utm_medium: 'cpc' },
  test_organic_video: { $initial_referring_domain: 'youtube.com' },
  test_direct_with_red_herring_utm_tags_is_direct: {
    $initial_referring_domain: '$direct',
    $initial_utm_source: 'what',
    $initial_utm_medium: 'who',
    $initial_utm_campaign: 'slim shady',
  },
  test_no_info_is_unknown: {},
  test_unknown_domain_is_referral: { $initial_referring_domain: 'some-unknown-domain.example.com' },
  test_doesnt_fail_on_numbers: {
    $initial_referring_domain: 'example.com',
    $initial_utm_source: 123,
    $initial_utm_medium: 123,
    $initial_utm_campaign: 123,
  },
};

const CHANNEL_EXPECTED: Record<string, string> = {
  test_direct: 'Direct',
  test_direct_empty_string: 'Direct',
  test_direct_null_string: 'Direct',
  test_cross_network: 'Cross Network',
  test_paid_shopping_domain: 'Paid Shopping',
  test_paid_shopping_source: 'Paid Shopping',
  test_paid_shopping_campaign: 'Paid Shopping',
  test_paid_search: 'Paid Search',
  test_paid_search_source: 'Paid Search',
  test_paid_video: 'Paid Video',
  test_paid_video_source: 'Paid Video',
  test_organic_video: 'Organic Video',
  test_direct_with_red_herring_utm_tags_is_direct: 'Direct',
  test_no_info_is_unknown: 'Unknown',
  test_unknown_domain_is_referral: 'Referral',
  test_doesnt_fail_on_numbers: 'Referral',
};

/**
 * test_channel_type.py's `_get_initial_channel_type_from_wild_clicks`: the landing page's utm
 * tags and click ids become the person's initial ones, the referrer's host its referring domain.
 */
function wildClick(url: string, referrer: string): Record<string, unknown> {
  const query = new URL(url).searchParams;
  const properties: Record<string, unknown> = {};
  for (const [param, property] of [
    ['utm_source', '$initial_utm_source'],
    ['utm_medium', '$initial_utm_medium'],
    ['utm_campaign', '$initial_utm_campaign'],
    ['gclid', '$initial_gclid'],
    ['gad_source', '$initial_gad_source'],
    ['msclkid', '$initial_msclkid'],
    ['fbclid', '$initial_fbclid'],
  ] as const) {
    const value = query.get(param);
    // parse_qs drops blank values, as the PostHog helper's `if … := query.get(…)` does.
    if (value) properties[property] = value;
  }
  properties['$initial_referring_domain'] = referrer ? new URL(referrer).host : '$direct';
  return properties;
}

/** The same click as the event properties of the session's first event (utm tags, click ids, `$referring_domain`). */
function wildClickEvent(url: string, referrer: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(wildClick(url, referrer)).map(([key, value]) => [
      key === '$initial_referring_domain' ? '$referring_domain' : key.replace('$initial_', ''),
      value,
    ]),
  );
}

const WILD_CLICKS: Record<string, [url: string, referrer: string, expected: string]> = {
  test_yahoo_search_for_shoes: [
    'https://www.temu.com/subject/n9/googleshopping-landingpage-a-psurl.html?_bg_fs=1&_p_rfs=1&_x_ads_sub_channel=shopping&_x_vst_scene=adg&mkt_rec=1&goods_id=601099512027500&sku_id=17592188550581&_x_ns_sku_id=17592188550581&_x_ads_channel=bing&_x_gmc_account=3429411&_x_gmc_catalog=1080172&_x_ads_creative_id=82326302656241&_x_ns_device=c&_x_ads_account=176202708&_x_ns_match_type=e&_x_ns_msclkid=98833ce81fa416f104e8599a17a48b7d&_x_ads_set=519351414&_x_ns_source=o&_x_ads_id=1317217234030436&msclkid=98833ce81fa416f104e8599a17a48b7d&utm_source=bing&utm_medium=cpc&utm_campaign=Bing%E8%B4%AD%E7%89%A9_GB_ROI_31148%E6%88%B7%E5%A4%96%E8%BF%90%E5%8A%A8_%E5%85%9C%E5%BA%95_%E9%80%9A%E6%8A%95_CHERIE_0812&utm_term=4585925565374752&utm_content=Bing%E8%B4%AD%E7%89%A9_GB_ROI_31148%E6%88%B7%E5%A4%96%E8%BF%90%E5%8A%A8_%E5%85%9C%E5%BA%95_%E9%80%9A%E6%8A%95_CHERIE_0812_2&adg_ctx=f-939d4ecb',
    'https://uk.search.yahoo.com/',
    'Paid Search',
  ],
  test_chrome_google_search_for_shoes: [
    'https://www.vivaia.com/item/square-toe-v-cut-flats-p_10003645.html?gid=10011676&currency=GBP&shipping_country_code=GB&gad_source=1&gclid=CjwKCAiA98WrBhAYEiwA2WvhOuiyZpOvzXUVBP0KNplo9EFUSYmm4-gaxt_nFGB4knYLxi-l909iYxoC3OsQAvD_BwE',
    '',
    'Paid Search',
  ],
  test_firefox_google_search_for_shoes: [
    'https://www.allbirds.co.uk/products/mens-wool-runner-mizzles-deep-emerald?gad_source=1&size=uk-7&utm_campaign=PMax%20%2F%2F%20UK%20%2F%2F%20Lifestyle%20Shoes&utm_content=&utm_medium=pmax&utm_source=google&utm_term=',
    '',
    'Paid Search',
  ],
  test_daily_mail_ad_click: [
    'https://www.vivaia.com/item/square-toe-v-cut-flats-p_10003645.html?gid=10011676&currency=GBP&shipping_country_code=GB&gclid=EAIaIQobChMIxvGy5rr_ggMVYi0GAB0KSAumEAEYASABEgLZ2PD_BwE',
    'https://2bb5cd7f10ba63d8b55ecfac1a3948db.safeframe.googlesyndication.com/',
    'Paid Unknown',
  ],
  test_google_organic: ['https://www.office.co.uk/', 'https://www.google.com/', 'Organic Search'],
  test_youtube_organic: ['https://twitter.com/hbomberguy', 'https://www.youtube.com/', 'Organic Video'],
  test_youtube_sidebar_ad: [
    'https://www.quooker.co.uk/?gclid=CjwKCAiAmsurBhBvEiwA6e-WPNVcMzaGnrW8G2Wd4Ye-dB5GZMPxohf-_sJRqThISXVzS97mq4s2MBoCK_wQAvD_BwE',
    'https://www.youtube.com/',
    'Paid Video',
  ],
  test_facebook_sidebar_ad: [
    'https://www.tothefairest.com/shop/?utm_source=facebook&utm_medium=cpc&utm_campaign=120201466136570051&fbclid=IwAR30EpkagUJ3vLo7_tl0R8FjnA3vnm5d6jzHvjwhNCm4kXDsAmTfDsckJBc',
    'https://l.facebook.com/',
    'Paid Social',
  ],
  test_facebook_feed_ad: [
    'https://www.loopearplugs.com/products/switch?utm_source=facebook&utm_medium=paid&utm_campaign=UK_EN_TOF_Purchase_BAU_ABO_NoScale_19.05.23&utm_content=UK_EN_TOF-Fashion-Interest-TOF_AllPlacements_AllGenders_18-65%2B_Carouselimage-Mix-3in1-v2_carousel-image_Question-overstimulation-v1_All_Purchase_LP-Switch_Highest-Value_BAU_Switch_NA&utm_term=120201603163080541&fbclid=IwAR3KhttbYqH0GWskV5LGQKXnPKmHwaKdW8gvHbEPHR5IYX8GDf2hhxAslso',
    'https://l.facebook.com/',
    'Paid Social',
  ],
  test_facebook_feed_organic_link: [
    'https://lifehacker.com/get-two-of-obsidian-entertainments-best-pc-rpgs-for-fre-1845845998?fbclid=IwAR1ZEOUVr76FRjZWnIio-v0gl5WWvd8soknOd6W6h580Grk34-Jpl1ai-kU',
    'https://l.facebook.com/',
    'Organic Social',
  ],
  test_bing_ad_click: [
    'https://www.mrporter.com/en-gb/mens/product/brunello-cucinelli/shoes/espadrilles/suede-espadrilles/1647597324114522?cm_mmc=sea&vtp00=BING&vtp01=SEAU&vtp02=483499616&vtp03=1239150613976957&vtp04=&vtp05=&vtp06=pla-4581046492826348&vtp07=&vtp08=&vtp09=e&vtp10=o&vtp11=c&vtp12=77447044368184&vtp13=shoes&vtp14=&vtp15=MR%20PORTER&vtp16=0400639982683&vtp17=GB&vtp18=EN&vtp19=4581046492826348&msclkid=f72b49e2bf2719cb4ee22c91ac4963a7&utm_source=bing&utm_medium=cpc&utm_campaign=BNG%3AMRP%3AEU%3AGB%3ALO%3AENG%3ASEAU%3APLA%3ASLR%3AMXO%3ANEW%3AMN%3ABRUNELLO-CUCINELLI%3ALV0%3ALV1%3ALV2%3AXXX%3A14%3AEMPTY%3A&utm_term=4581046492826348&utm_content=GOO%3AMRP%3AEU%3AGB%3ALO%3AENG%3ASEAU%3APLA%3ASLR%3AMXO%3ANEW%3AMN%3ABRUNELLO-CUCINELLI%3ASHOES%3ASUEDE_SHOES%3ASUEDE_SHOES%3AXXX%3A14%3AEMPTY%3A',
    'https://www.bing.com/',
    'Paid Search',
  ],
  'test_bing_ad_click, in firefox': [
    'https://www.nisbets.co.uk/nisbets-essentials-chefs-clog-black-3839/b979-3839?vatToggle=incvat&plaid=1&cm_mmc=BingPLA-_-710225369-_-1246847484880804-_-B979-3839&cm_mmca1=bi_710225369_1246847484880804_77928093437482_pla-4581527532440033_c_&utm_id=bing_710225369_1246847484880804_77928093437482_pla-4581527532440033%3Apla-4581527532440033_c&kpid=bi_cmp-710225369_adg-1246847484880804_ad-77928093437482_pla-4581527532440033_dev-c_ext-_prd-B979-3839_sig-febaceddde9f13596573abaecd6840bc&utm_source=bing&utm_medium=cpc&utm_campaign=8+-+Shopping+-+Clothing&utm_term=4581527532440033&utm_content=Clothing',
    '',
    'Paid Search',
  ],
  test_bing_organic_click: ['https://www.schuh.co.uk/', 'https://www.bing.com/', 'Organic Search'],
  test_duckduckgo_organic_click: ['https://www.asos.com/women/shoes/cat/?cid=4172', 'https://duckduckgo.com/', 'Organic Search'],
  test_duckduckgo_paid_click: [
    'https://www.temu.com/uk/kuiper/un2.html?_p_rfs=1&subj=un-search1&_p_jump_id=831&_x_vst_scene=adg&search_key=.%20shoes&_x_ads_sub_channel=search&_x_ads_channel=bing&_x_ads_account=176202190&_x_ads_set=519193183&_x_ads_id=1316117718217619&_x_ads_creative_id=82257583982288&_x_ns_source=s&_x_ns_msclkid=0c97748ea8581c0fa51611f9afccba18&_x_ns_match_type=e&_x_ns_bid_match_type=be&_x_ns_query=shoes&_x_ns_keyword=.%20shoes&_x_ns_device=c&_x_ns_targetid=kwd-82258273368290%3Aloc-188&_x_ns_extensionid=&msclkid=0c97748ea8581c0fa51611f9afccba18&utm_source=bing&utm_medium=cpc&utm_campaign=0725_WJJ_UK_KW_web-app-purchase-offline%7Cweb-purchase-offline_UK%E9%AB%98%E8%8A%B1%E8%B4%B9%E8%AF%8D9533&utm_term=.%20shoes&utm_content=0725_WJJ-%E9%80%9A%E6%8A%95-UK_UK_%E7%BB%9F%E4%B8%80%E6%90%9C%E7%B4%A2%E9%A1%B5%20%E3%80%90%E7%9B%B4%E6%8E%A5%E6%8A%95%E6%94%BE%E7%94%A8%E3%80%91_webtoapp_EXACT_UK%E9%AB%98%E8%8A%B1%E8%B4%B9%E8%AF%8D4977&adg_ctx=f-939d4ecb',
    'https://duckduckgo.com/',
    'Paid Search',
  ],
  test_fbclid_only: ['https://xyz.com/?fbclid=ABC', '', 'Organic Social'],
};

/** TestReferringDomainType's cases: the first referring domain and its type. */
const DOMAIN_TYPE_CASES: [test: string, domain: string, expected: string][] = [
  ['test_direct', '$direct', '$direct'],
  ['test_search', 'www.google.co.uk', 'Search'],
  ['test_search', 'yahoo.co.jp', 'Search'],
  ['test_shopping', 'm.alibaba.com', 'Shopping'],
  ['test_shopping', 'stripe.com', 'Shopping'],
  ['test_shopping', 'shopping.yahoo.co.jp', 'Shopping'],
  ['test_social', 'lnkd.in', 'Social'],
  ['test_social', 'old.reddit.com', 'Social'],
  ['test_social', 'plus.google.com', 'Social'],
  ['test_social', 'news.ycombinator.com', 'Social'],
];

describe('trends: virtual person properties (PostHog test_trends.py, test_channel_type.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  /** Each person's [channel type, referring domain type], by person, from one breakdown. */
  let derived: Map<string, [string, string]>;
  /** Each session case's `$channel_type`, by the distinct id that sent it. */
  let sessionChannels: Map<string, string>;

  const run = (team: number, body: Record<string, unknown>) =>
    service.run('TrendsQuery', { id: team, timezone: 'UTC' }, parseTrendFilter(body), journeyTimeMs(NOW));

  beforeAll(async () => {
    stores = await createTestStores('trend_virtual');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const signUp = [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z' }];
    const people: Record<string, Record<string, unknown>> = {};
    for (const [name, properties] of Object.entries(CHANNEL_CASES)) people[`channel:${name}`] = properties;
    for (const [name, [url, referrer]] of Object.entries(WILD_CLICKS)) people[`wild:${name}`] = wildClick(url, referrer);
    for (const [, domain] of DOMAIN_TYPE_CASES) people[`domain:${domain}`] = { $initial_referring_domain: domain };
    const journeys: JourneyPeople = Object.fromEntries(Object.keys(people).map((person) => [person, signUp]));
    const sessionJourneys: JourneyPeople = {};
    const sessionEvents: [string, Record<string, unknown>][] = [
      ...SESSION_CASES.map(([test, properties], i): [string, Record<string, unknown>] => [`session:${test}:${i}`, properties]),
      ...Object.entries(WILD_CLICKS).map(([test, [url, referrer]]): [string, Record<string, unknown>] => [`wild:${test}`, wildClickEvent(url, referrer)]),
    ];
    sessionEvents.forEach(([person, properties], i) => {
      const $session_id = `0170eb4e-4c00-7000-8000-${String(i).padStart(12, '0')}`;
      sessionJourneys[person] = [{ event: '$pageview', timestamp: '2020-01-04T12:00:00Z', properties: { $session_id, ...properties } }];
    });
    await Promise.all([
      insertJourneys(stores, journeys, { teamId: TEAM.channels, personProperties: people }),
      insertJourneys(stores, sessionJourneys, { teamId: TEAM.sessions }),
      insertJourneys(
        stores,
        { person1: signUp, person2: signUp, person3: signUp },
        {
          teamId: TEAM.trends,
          personProperties: {
            person1: { $initial_referring_domain: 'https://www.google.com' },
            person2: { $initial_referring_domain: '$direct' },
            person3: { $initial_referring_domain: 'https://www.someothersite.com' },
          },
        },
      ),
    ]);
    const answer = await run(TEAM.channels, {
      display: 'ActionsTable',
      events: [{ id: 'sign up' }],
      breakdowns: [
        { type: 'event_metadata', property: 'distinct_id' },
        { type: 'person', property: '$virt_initial_channel_type' },
        { type: 'person', property: '$virt_initial_referring_domain_type' },
      ],
      breakdown_limit: 250,
    });
    derived = new Map(
      answer.result.map((r) => [String((r.breakdown_value as string[])[0]), [(r.breakdown_value as string[])[1]!, (r.breakdown_value as string[])[2]!]]),
    );
  });
  afterAll(() => stores.close());

  const sessionChannel = async (person: string) => {
    sessionChannels ??= new Map(
      (
        await run(TEAM.sessions, {
          display: 'ActionsTable',
          events: [{ id: '$pageview' }],
          breakdowns: [
            { type: 'event_metadata', property: 'distinct_id' },
            { type: 'session', property: '$channel_type' },
          ],
          breakdown_limit: 250,
        })
      ).result.map((r) => [String((r.breakdown_value as string[])[0]), String((r.breakdown_value as string[])[1])]),
    );
    return sessionChannels.get(person);
  };

  it.each(SESSION_CASES.map(([test, , expected], i) => [test, i, expected] as const))(
    "TestChannelType.%s, session %#: the session's $channel_type (test_channel_type.py)",
    async (test, i, expected) => {
      expect(await sessionChannel(`session:${test}:${i}`)).toBe(expected);
    },
  );

  it.each(Object.keys(WILD_CLICKS))('TestChannelType.%s, the session side (test_channel_type.py)', async (name) => {
    expect(await sessionChannel(`wild:${name}`)).toBe(WILD_CLICKS[name]![2]);
  });

  it('test_virtual_person_property_breakdown (test_trends.py)', async () => {
    const response = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up' }],
      breakdown: '$virt_initial_channel_type',
      breakdown_type: 'person',
    });
    expect(response.result.map((r) => [r.label, r.count])).toEqual([
      ['Direct', 1],
      ['Organic Search', 1],
      ['Referral', 1],
    ]);
  });

  it.each(Object.keys(CHANNEL_CASES))('TestChannelType.%s (test_channel_type.py)', (name) => {
    expect(derived.get(`channel:${name}`)?.[0]).toBe(CHANNEL_EXPECTED[name]);
  });

  it.each(Object.keys(WILD_CLICKS))('TestChannelType.%s, the person side (test_channel_type.py)', (name) => {
    expect(derived.get(`wild:${name}`)?.[0]).toBe(WILD_CLICKS[name]![2]);
  });

  it.each(DOMAIN_TYPE_CASES)('TestReferringDomainType.%s: %s (test_channel_type.py)', (_test, domain, expected) => {
    expect(derived.get(`domain:${domain}`)?.[1]).toBe(expected);
  });

  it('an unknown referring domain has no type: "none" (test_channel_type.py, lookupDomainType)', () => {
    expect(derived.get('channel:test_unknown_domain_is_referral')?.[1]).toBe(BREAKDOWN_NULL);
  });

  it('as a filter: the property of test_lifecycle_virtual_person_property_filter (test_lifecycle_query_runner.py) on a trend', async () => {
    const organic = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up', properties: [{ key: '$virt_initial_channel_type', value: 'Organic Search', operator: 'exact', type: 'person' }] }],
    });
    expect(organic.result[0]!.count).toBe(1);
    const notDirect = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up' }],
      properties: [{ key: '$virt_initial_channel_type', value: 'Direct', operator: 'is_not', type: 'person' }],
    });
    expect(notDirect.result[0]!.count).toBe(2);
    const search = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up' }],
      properties: [{ key: '$virt_initial_referring_domain_type', value: 'Search', operator: 'exact', type: 'person' }],
    });
    expect(search.result[0]!.count).toBe(1);
  });

  it('as a HogQL filter: the filter of test_lifecycle_virtual_person_property_hogql_filter (test_lifecycle_query_runner.py) on a trend', async () => {
    const organic = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up', properties: [{ key: "person.$virt_initial_channel_type = 'Organic Search'", type: 'hogql' }] }],
    });
    expect(organic.result[0]!.count).toBe(1);
    const byDomainType = await run(TEAM.trends, {
      date_from: '-7d',
      events: [{ id: 'sign up' }],
      breakdown: 'person.$virt_initial_referring_domain_type',
      breakdown_type: 'hogql',
    });
    expect(byDomainType.result.map((r) => [r.breakdown_value, r.count])).toEqual([
      ['$direct', 1],
      ['Search', 1],
      [BREAKDOWN_NULL, 1],
    ]);
  });
});
