export { activityPage, changesBetween, recordActivity, type ActivityDetail, type Change } from './activity-log';
