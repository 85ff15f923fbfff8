import { propertyRawSql, propertyTextSql, type QueryParams } from '@sightline/properties';
import { CHANNEL_SOURCES, MEDIUMS, SITE_TYPES, SITES } from './channel-definitions';

/**
 * PostHog's virtual person properties (posthog/hogql/database/database.py, `_use_virtual_fields`),
 * derived from a person's `$initial_…` properties rather than stored: the acquisition channel
 * (posthog/hogql/database/schema/channel_type.py, `create_initial_channel_type`) and the type of
 * the first referring domain (`create_initial_domain_type`).
 */
export const VIRTUAL_PERSON_PROPERTIES: ReadonlySet<string> = new Set(['$virt_initial_channel_type', '$virt_initial_referring_domain_type']);

/** [domain type, paid channel, organic channel] ('' for none) of each source category, by code − 1. */
const CATEGORIES: (readonly [string, string, string])[] = [
  ...SITE_TYPES.map((type) => [type, `Paid ${type}`, `Organic ${type}`] as const),
  ['Email', '', 'Email'],
  ...[...new Set(CHANNEL_SOURCES.map(([, organic]) => organic))].map((organic) => ['', '', organic] as const),
];
const categoryCode = (domainType: string, organic: string) => CATEGORIES.findIndex(([type, , channel]) => type === domainType && channel === organic) + 1;

/** Every source (site or channel word) with its category code, for ClickHouse's transform(). */
const SOURCE_KEYS: string[] = [];
const SOURCE_CODES: number[] = [];
for (const type of [...SITE_TYPES, 'Email'] as const) {
  for (const site of SITES[type].split(' ')) {
    SOURCE_KEYS.push(site);
    SOURCE_CODES.push(categoryCode(type, type === 'Email' ? 'Email' : `Organic ${type}`));
  }
}
for (const [source, organic] of CHANNEL_SOURCES) {
  SOURCE_KEYS.push(source);
  SOURCE_CODES.push(categoryCode('', organic));
}

/**
 * The sources go into the SQL text rather than as query parameters: parameters travel in the
 * request's URL, which the embedded engine's HTTP front caps at 16 KiB, and these are some
 * 30 KB. They are constants of this module, never input, and checked here to be plain words.
 */
const SAFE_SOURCE = /^[a-z0-9 .+_-]+$/;
for (const key of SOURCE_KEYS) if (!SAFE_SOURCE.test(key)) throw new Error(`channel source ${JSON.stringify(key)} is not a plain word`);
const SOURCE_KEYS_SQL = `[${SOURCE_KEYS.map((k) => `'${k}'`).join(',')}]`;
const SOURCE_CODES_SQL = `[${SOURCE_CODES.join(',')}]`;
/** Aliases of the two arrays: each property's SQL defines them once and reads them by name after. */
const KEYS_ALIAS = '__channel_source_keys';
const CODES_ALIAS = '__channel_source_codes';

type Attribute = 0 | 1 | 2;
const DOMAIN_TYPE: Attribute = 0;
const PAID: Attribute = 1;
const ORGANIC: Attribute = 2;

/** A property read as HogQL reads `properties.x`: NULL when missing or a JSON null, else its text. */
export type NullablePropertySql = (key: string) => string;

/**
 * The SQL of the virtual properties over one query's parameters. Each property's SQL is whole on
 * its own (it may be placed at any level of a query): its first source lookup defines the
 * sources' arrays under an alias, the others read the alias, so the arrays appear once in it.
 */
export class ChannelTypeSql {
  private bound: Record<string, string> | null = null;
  private sourcesDefined = false;
  private readonly keys = new Map<string, string>();

  constructor(private readonly params: QueryParams) {}

  private arrays(): Record<string, string> {
    this.bound ??= {
      domainTypes: this.params.add(
        CATEGORIES.map((c) => c[DOMAIN_TYPE]),
        'Array(String)',
      ),
      paid: this.params.add(
        CATEGORIES.map((c) => c[PAID]),
        'Array(String)',
      ),
      organic: this.params.add(
        CATEGORIES.map((c) => c[ORGANIC]),
        'Array(String)',
      ),
      mediums: this.params.add(
        MEDIUMS.map(([medium]) => medium),
        'Array(String)',
      ),
      mediumPaid: this.params.add(
        MEDIUMS.map(([, paid]) => paid ?? ''),
        'Array(String)',
      ),
      mediumOrganic: this.params.add(
        MEDIUMS.map(([, , organic]) => organic),
        'Array(String)',
      ),
    };
    return this.bound;
  }

  /** A source's category code (0: not listed). */
  private sourceCode(key: string): string {
    const first = !this.sourcesDefined;
    this.sourcesDefined = true;
    const keys = first ? `(${SOURCE_KEYS_SQL} AS ${KEYS_ALIAS})` : KEYS_ALIAS;
    const codes = first ? `(${SOURCE_CODES_SQL} AS ${CODES_ALIAS})` : CODES_ALIAS;
    return `transform(${key}, ${keys}, ${codes}, toUInt8(0))`;
  }

  /**
   * An attribute of a source, as PostHog's `lookup…SourceType` reads its dictionary: the value
   * itself first, then its first significant subdomain (`https://www.google.com` → `google.com`),
   * each only when that entry has the attribute.
   */
  private sourceAttribute(value: string, attribute: Attribute): string {
    const a = this.arrays();
    const names = attribute === DOMAIN_TYPE ? a.domainTypes : attribute === PAID ? a.paid : a.organic;
    const text = `coalesce(${value}, '')`;
    const of = (key: string) => `nullIf(arrayElement(${names}, ${this.sourceCode(key)}), '')`;
    return `coalesce(${of(text)}, ${of(`cutToFirstSignificantSubdomain(${text})`)})`;
  }

  private mediumAttribute(value: string, attribute: typeof PAID | typeof ORGANIC): string {
    const a = this.arrays();
    return `nullIf(transform(coalesce(${value}, ''), ${a.mediums}, ${attribute === PAID ? a.mediumPaid : a.mediumOrganic}, ''), '')`;
  }

  /** `$virt_initial_referring_domain_type`: `$direct`, or the first referring domain's type (NULL when unknown). */
  initialReferringDomainType(property: NullablePropertySql): string {
    this.sourcesDefined = false;
    const domain = property('$initial_referring_domain');
    return `if(ifNull(${domain} = '$direct', 0), '$direct', ${this.sourceAttribute(domain, DOMAIN_TYPE)})`;
  }

  /** `$virt_initial_channel_type`: PostHog's default channel rules over the person's first touch. */
  initialChannelType(property: NullablePropertySql): string {
    this.sourcesDefined = false;
    const present = (key: string) => `nullIf(nullIf(${property(key)}, ''), 'null')`;
    const campaign = `lower(${present('$initial_utm_campaign')})`;
    const medium = `lower(${present('$initial_utm_medium')})`;
    const source = `lower(${present('$initial_utm_source')})`;
    const domain = property('$initial_referring_domain');
    const hasGclid = `isNotNull(${present('$initial_gclid')})`;
    const hasFbclid = `isNotNull(${present('$initial_fbclid')})`;
    const gadSource = present('$initial_gad_source');
    const is = (condition: string) => `ifNull(${condition}, 0)`;
    const shopping = is(`match(${campaign}, '^(.*(([^a-df-z]|^)shop|shopping).*)$')`);
    const video = is(`match(${campaign}, '^(.*video.*)$')`);
    const paid = `${is(`${medium} IN ('cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting')`)} OR ${is(`startsWith(${medium}, 'paid')`)} OR ${hasGclid} OR isNotNull(${gadSource})`;
    const direct = `${is(`${domain} = '$direct'`)} AND isNull(${medium}) AND (isNull(${source}) OR ${is(`${source} IN ('(direct)', 'direct', '$direct')`)}) AND NOT ${hasFbclid}`;
    return `multiIf(
      ${is(`match(${campaign}, 'cross-network')`)}, 'Cross Network',
      ${paid}, coalesce(
        ${this.sourceAttribute(source, PAID)},
        if(${shopping}, 'Paid Shopping', NULL),
        ${this.mediumAttribute(medium, PAID)},
        ${this.sourceAttribute(domain, PAID)},
        multiIf(${is(`${gadSource} = '1'`)}, 'Paid Search', ${video}, 'Paid Video', ${hasFbclid}, 'Paid Social', 'Paid Unknown')),
      ${direct}, 'Direct',
      coalesce(
        ${this.sourceAttribute(source, ORGANIC)},
        if(${shopping}, 'Organic Shopping', NULL),
        ${this.mediumAttribute(medium, ORGANIC)},
        ${this.sourceAttribute(domain, ORGANIC)},
        multiIf(${video}, 'Organic Video', ${is(`match(${medium}, 'push$')`)}, 'Push', ${hasFbclid}, 'Organic Social',
          ${is(`${domain} = '$direct'`)}, 'Direct', isNotNull(${domain}), 'Referral', 'Unknown')))`;
  }

  /**
   * A virtual person property's SQL (Nullable(String)) over a JSON column of person properties,
   * or null for a key that is not one.
   */
  personPropertyFrom(column: string, key: string): string | null {
    if (!VIRTUAL_PERSON_PROPERTIES.has(key)) return null;
    return this.personProperty(key, (name) => {
      let placeholder = this.keys.get(name);
      // One placeholder per key, so a property read several times is one expression ClickHouse computes once.
      if (!placeholder) this.keys.set(name, (placeholder = this.params.add(name, 'String')));
      return `if(${propertyRawSql(column, placeholder)} IN ('', 'null'), NULL, ${propertyTextSql(column, placeholder)})`;
    });
  }

  /** A virtual person property's SQL (Nullable(String)), or null for a key that is not one. */
  personProperty(key: string, property: NullablePropertySql): string | null {
    if (key === '$virt_initial_channel_type') return this.initialChannelType(property);
    if (key === '$virt_initial_referring_domain_type') return this.initialReferringDomainType(property);
    return null;
  }
}
