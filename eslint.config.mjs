// ESLint checks the import boundaries of the workspace (docs/architecture.md, "Import
// boundaries"). Prettier formats; this file holds no style rules. Import cycles, type-only ones
// included, are checked by dependency-cruiser (.dependency-cruiser.cjs): import-x/no-cycle skips
// `import type` edges by design.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const root = path.dirname(fileURLToPath(import.meta.url));
const dirsIn = (parent) =>
  readdirSync(path.join(root, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

const apps = dirsIn('apps');
const workspaces = ['apps', 'libs', 'tools'].flatMap((parent) =>
  dirsIn(parent)
    .map((name) => `${parent}/${name}`)
    .filter((dir) => existsSync(path.join(root, dir, 'package.json'))),
);

// An app may reach another app only through that app's declared entry point, and only where
// the design says so: the all-in-one process composes the API, gateway and worker; the API
// serves the built web app from the folder @sightline/web's package main names.
const appsReachable = { 'all-in-one': ['api', 'gateway', 'worker'], api: ['web'] };
// The entry point is the package's main (and, for a JavaScript main, the .d.ts beside it).
const entryPoints = (app) => {
  const main = JSON.parse(readFileSync(path.join(root, 'apps', app, 'package.json'), 'utf8')).main;
  return [`./${main}`, ...(main.endsWith('.js') ? [`./${main.replace(/\.js$/, '.d.ts')}`] : [])];
};

const appZones = apps.flatMap((app) =>
  apps
    .filter((other) => other !== app)
    .map((other) => ({
      target: `apps/${app}`,
      from: `apps/${other}`,
      except: appsReachable[app]?.includes(other) ? entryPoints(other) : [],
      message: 'An app never imports another app: move the shared code to a library in libs/.',
    })),
);

// A feature folder of the API (one per resource) reaches another only through its index.ts,
// so each folder's public surface is the list that file exports. http/ (routing, parameters,
// responses) and testing/ (test fixtures) are the app's shared plumbing, not features: any
// folder may use their files, but they too reach a feature only through its index.ts.
const apiSrc = 'apps/api/src';
const apiShared = ['http', 'testing'];
const apiFolders = dirsIn(apiSrc);
const apiFeatures = apiFolders.filter((folder) => !apiShared.includes(folder));
const featureZones = apiFolders.map((folder) => ({
  target: `${apiSrc}/${folder}`,
  from: apiFeatures.filter((other) => other !== folder).map((other) => `${apiSrc}/${other}`),
  except: ['./index.ts'],
  message: 'Import another API feature folder through its index.ts.',
}));

// Tests, test fixtures, benchmarks, tools and the bundled web app may use devDependencies.
const devOnlyFiles = ['**/*.test.ts', '**/*.test.tsx', 'apps/api/src/testing/**', 'tools/**', 'apps/web/**'];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'apps/web/dist-path.js', 'apps/cli/bin/**'],
  },
  {
    files: ['**/*.{ts,tsx,mts,cts}'],
    extends: [tseslint.configs.recommended],
    rules: {
      // The compiler's noUnusedLocals/noUnusedParameters already check this (with its `_` rule).
      '@typescript-eslint/no-unused-vars': 'off',
      // require() is how this code base loads a heavy or optional module lazily, on first use.
      '@typescript-eslint/no-require-imports': 'off',
      // A `let` that a signal handler reads before the one assignment that fills it stays a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests reach into untyped browser globals and SDK internals.
    files: ['**/*.test.ts', 'test/**', 'tools/testkit/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['tsconfig.json', 'apps/web/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: root,
          zones: [
            {
              target: ['libs', 'tools'],
              from: 'apps',
              message: 'A library never imports an app: the app depends on the library.',
            },
            ...appZones,
            ...featureZones,
          ],
        },
      ],
    },
  },
  {
    // Every ClickHouse read outside libs/clickhouse goes through queryClickhouse, which tags it
    // with its kind and project, times it and applies the limits of one query (docs/changing.md).
    files: ['apps/**/*.{ts,tsx}', 'libs/**/*.ts'],
    ignores: ['libs/clickhouse/**', '**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^(query|exec)$/] > ObjectExpression.arguments > Property.properties[key.name='query']",
          message: 'Read ClickHouse through queryClickhouse(ch, { kind, teamId, sql, params }) from @sightline/clickhouse.',
        },
      ],
    },
  },
  // Every package a workspace imports is declared in its own package.json (the root one holds
  // the test and build tools every workspace shares).
  ...workspaces.map((dir) => ({
    files: [`${dir}/**/*.{ts,tsx,js,cjs,mjs}`],
    rules: {
      'import-x/no-extraneous-dependencies': ['error', { packageDir: [path.join(root, dir), root], devDependencies: devOnlyFiles }],
    },
  })),
);
