export { createFlagEvaluationRouter, type DecideRouteDeps } from './decide.route';
export { createLocalEvaluationRoutes } from './local-evaluation.route';
