export * from './shared/date-range';
export * from './trends/trend-filter';
export * from './trends/trends.query';
