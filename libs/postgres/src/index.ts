export * from './metadata-store';
export * from './store-interfaces';
export * from './migrations';
export * from './pglite-template';
export * from './unique-violation';
