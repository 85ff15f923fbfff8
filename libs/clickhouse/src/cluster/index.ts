export * from './layout';
export * from './cluster-statements';
