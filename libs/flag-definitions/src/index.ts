export * from './definitions.repository';
export * from './definitions-cache';
export * from './invalidation';
export * from './local-evaluation';
