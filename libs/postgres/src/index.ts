export * from './metadata-store';
export * from './migrations';
export * from './pglite-template';
export * from './unique-violation';
