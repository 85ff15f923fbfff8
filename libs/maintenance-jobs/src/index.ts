export { createJobOperator } from './job-operator';
export { createPersonEventsDeletionJob, runPersonEventsDeletionJob, type PersonEventsDeletionDeps } from './person-events-deletion.job';
