export * from './common/date-range';
export * from './trends/trend-filter';
export * from './trends/trends.query';
