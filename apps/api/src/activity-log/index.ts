export { activityPage, recordActivity } from './activity-log';
