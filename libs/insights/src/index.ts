export * from './date-range';
export * from './trend-filter';
export * from './trends.query';
