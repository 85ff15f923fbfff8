// Import cycles, checked by `npm run lint`. Type-only imports count: a type import that points
// back up the graph is the same design knot as a runtime one, even though TypeScript erases
// it (ESLint's import-x/no-cycle skips those edges by design, hence this tool).
// TEMPORARY EXCEPTION, for the lead to delete: the one cycle left inside libs/insights, which the
// query-runner reshaping (issue 28, §2) is rewriting in parallel. trend-order.ts takes the type
// TrendSeries from trends.query.ts, which imports trend-order's functions. Delete this list (and
// its use below) once that work lands; the rule then covers every file.
const KNOWN_CYCLES_PENDING_RUNNERS = ['^libs/insights/src/trends/trend-order\\.ts$', '^libs/insights/src/trends/trends\\.query\\.ts$'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules form no import cycle, type-only imports included: move the shared piece down.',
      from: { pathNot: KNOWN_CYCLES_PENDING_RUNNERS },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '(^|/)dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    cache: false,
  },
};
