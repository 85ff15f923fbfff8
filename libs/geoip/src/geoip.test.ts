import { openGeoIp } from './geoip';

describe('GeoIP from the shipped GeoLite2 City database', () => {
  it('maps an address to $geoip_* properties (MaxMind test address 81.2.69.142)', async () => {
    const geoip = await openGeoIp();
    expect(geoip.lookup('81.2.69.142')).toMatchObject({
      $geoip_country_code: 'GB',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
      $geoip_continent_name: 'Europe',
    });
    expect(geoip.lookup('::ffff:81.2.69.142').$geoip_country_code).toBe('GB');
    expect(geoip.lookup('127.0.0.1')).toEqual({});
    expect(geoip.lookup('not an ip')).toEqual({});
  });

  it('answers one shared, frozen object per database record', async () => {
    const geoip = await openGeoIp();
    const first = geoip.lookup('81.2.69.142');
    expect(geoip.lookup('81.2.69.142')).toBe(first);
    expect(geoip.lookup('::ffff:81.2.69.142')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(geoip.lookup('127.0.0.1'))).toBe(true);
  });
});
