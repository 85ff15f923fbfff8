// Import cycles, checked by `npm run lint`. Type-only imports count: a type import that points
// back up the graph is the same design knot as a runtime one, even though TypeScript erases
// it (ESLint's import-x/no-cycle skips those edges by design, hence this tool).

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules form no import cycle, type-only imports included: move the shared piece down.',
      from: { path: '.' },
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
