export * from './metadata-store';
export * from './migrations';
