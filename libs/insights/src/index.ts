export * from './common/date-range';
export * from './trends/trend-filter';
export * from './trends/trend-formula';
export * from './trends/trend-series.sql';
export * from './trends/trends.query';
export * from './trends/trends.service';
export * from './cohorts/cohort-membership.sql';
export * from './cohorts/cohorts.repository';
