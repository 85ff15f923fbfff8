// The import rules of `npm run lint` catch what they are for: a misconfigured rule (a resolver
// that resolves nothing, a zone that matches no file) would pass every file silently.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.join(__dirname, '..');
const eslint = new ESLint({ cwd: root });

/** The rules that fire on `code` as if it were the file at `file` (relative to the repository). */
async function rulesFiredOn(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('npm run lint: import boundaries', () => {
  jest.setTimeout(60_000);

  it('refuses a library importing an app', async () => {
    expect(await rulesFiredOn('libs/bus/src/probe.ts', "import { createWorker } from '@sightline/worker';\nvoid createWorker;\n")).toContain(
      'import-x/no-restricted-paths',
    );
  });

  it('refuses an app importing another app, except the entry points the design names', async () => {
    expect(await rulesFiredOn('apps/cli/src/probe.ts', "import { createWorker } from '@sightline/worker';\nvoid createWorker;\n")).toContain(
      'import-x/no-restricted-paths',
    );
    expect(await rulesFiredOn('apps/all-in-one/src/probe.ts', "import { createWorker } from '@sightline/worker';\nvoid createWorker;\n")).toEqual([]);
  });

  it("refuses an API feature folder reaching into another's files, not through its index.ts", async () => {
    expect(await rulesFiredOn('apps/api/src/actions/probe.ts', "import { findRole } from '../organization/roles.repository';\nvoid findRole;\n")).toContain(
      'import-x/no-restricted-paths',
    );
    expect(await rulesFiredOn('apps/api/src/actions/probe.ts', "import { findRole } from '../organization';\nvoid findRole;\n")).toEqual([]);
  });

  it('refuses a package its workspace does not declare', async () => {
    expect(await rulesFiredOn('libs/bus/src/probe.ts', "import { Client } from 'pg';\nvoid Client;\n")).toContain('import-x/no-extraneous-dependencies');
  });
});

describe('npm run lint: import cycles', () => {
  jest.setTimeout(60_000);

  /** dependency-cruiser with the repository's rules over two modules, as `npm run lint` runs it. */
  function cruise(a: string, b: string): { status: number | null; output: string } {
    const dir = mkdtempSync(path.join(tmpdir(), 'lint-cycle-'));
    try {
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
      writeFileSync(path.join(dir, 'a.ts'), a);
      writeFileSync(path.join(dir, 'b.ts'), b);
      const run = spawnSync(
        process.execPath,
        [path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), '.', '--config', path.join(root, '.dependency-cruiser.cjs')],
        {
          cwd: dir,
          encoding: 'utf8',
        },
      );
      return { status: run.status, output: run.stdout + run.stderr };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('refuses a cycle whose back edge is a type-only import', () => {
    const found = cruise(
      "import { b } from './b';\nexport interface A { n: number }\nexport const a = b + 1;\n",
      "import type { A } from './a';\nexport const b = 1;\nexport type B = A;\n",
    );
    expect(found.output).toContain('no-cycle');
    expect(found.status).not.toBe(0);
  });

  it('passes the same modules once the shared type moves out of the cycle', () => {
    const found = cruise("import { b } from './b';\nexport const a = b + 1;\n", 'export const b = 1;\n');
    expect(found.output).not.toContain('no-cycle');
    expect(found.status).toBe(0);
  });
});
