export * from './analytics-store';
export * from './migrations';
export * from './datetime';
export * from './tables/events.table';
export * from './tables/dead-letters.table';
export * from './cluster';
