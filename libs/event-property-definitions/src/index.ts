export * from './property-type';
export * from './definitions.repository';
