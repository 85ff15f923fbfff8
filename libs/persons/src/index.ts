export * from './illegal-distinct-ids';
export * from './property-updates';
export * from './person-batch';
export * from './person-copies';
export * from './groups';
export * from './person-reads';
export * from './flag-person-reads';
