export { createFlagEvaluationRouter, flagEvaluationFastPath, type DecideRouteDeps } from './decide.route';
export { createLocalEvaluationRoutes } from './local-evaluation.route';
export { DEFAULT_SDK_SETTINGS } from './decide-response';
