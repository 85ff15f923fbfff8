export * from './geoip';
