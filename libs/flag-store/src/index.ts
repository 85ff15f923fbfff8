export * from './definitions.repository';
export * from './definitions-cache';
export * from './flag-changes-channel';
export * from './local-evaluation';
