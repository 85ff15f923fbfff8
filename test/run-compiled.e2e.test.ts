// `npm start`'s launcher (scripts/run-compiled.cjs): an entry runs from its compiled bundle, a
// changed source is compiled again before it runs (never stale), each source keeps its own
// __dirname, arguments reach the entry, and an entry esbuild cannot bundle correctly runs
// through tsx instead. Uses a small entry in a temporary directory, not the service.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..');
const launcher = join(root, 'scripts', 'run-compiled.cjs');
const outDir = join(root, 'node_modules', '.cache', 'sightline', 'build');
const run = promisify(execFile);

let dir: string;
let entry: string;
let bundle: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sightline-run-compiled-'));
  mkdirSync(join(dir, 'lib'));
  entry = join(dir, 'entry.ts');
  bundle = join(
    outDir,
    `${relative(root, entry)
      .replace(/\.ts$/, '')
      .replace(/[^A-Za-z0-9_-]+/g, '_')}.cjs`,
  );
  writeFileSync(join(dir, 'lib', 'greeting.txt'), 'hello');
  writeFileSync(
    join(dir, 'lib', 'greet.ts'),
    "import { readFileSync } from 'node:fs';\nimport { join } from 'node:path';\n" +
      "export const greet = (who: string): string => `${readFileSync(join(__dirname, 'greeting.txt'), 'utf8')} ${who}`;\n",
  );
  writeFileSync(
    entry,
    "import { greet } from './lib/greet';\nconst who: string = process.argv[2] ?? 'nobody';\n" +
      'console.log(JSON.stringify({ text: greet(who), argv1: process.argv[1] }));\n',
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const suffix of ['.cjs', '.cjs.map', '.manifest.json']) rmSync(bundle.replace(/\.cjs$/, suffix), { force: true });
});

async function start(...args: string[]) {
  const { stdout, stderr } = await run(process.execPath, [launcher, entry, ...args], { cwd: root });
  return { out: JSON.parse(stdout.trim().split('\n').pop()!) as { text: string; argv1: string }, stderr };
}

test('runs the entry from its bundle, with the sources’ own __dirname and the arguments given', async () => {
  const { out, stderr } = await start('ana');
  expect(stderr).toBe('');
  expect(out.text).toBe('hello ana');
  expect(out.argv1).toBe(entry);
  expect(existsSync(bundle)).toBe(true);
  expect(readFileSync(bundle, 'utf8')).toContain('greeting.txt');
});

test('a start with unchanged sources reuses the bundle; an edited source is compiled again first', async () => {
  await start('ana');
  const compiledAt = statSync(bundle).mtimeMs;
  await start('ana');
  expect(statSync(bundle).mtimeMs).toBe(compiledAt);

  writeFileSync(
    join(dir, 'lib', 'greet.ts'),
    "import { readFileSync } from 'node:fs';\nimport { join } from 'node:path';\n" +
      "export const greet = (who: string): string => `${readFileSync(join(__dirname, 'greeting.txt'), 'utf8')}, ${who}!`;\n",
  );
  const { out } = await start('bo');
  expect(out.text).toBe('hello, bo!');
  expect(statSync(bundle).mtimeMs).not.toBe(compiledAt);
});

test('a source of the same size set back to an older time still counts as changed', async () => {
  await start('ana');
  const source = join(dir, 'lib', 'greet.ts');
  const text = readFileSync(source, 'utf8').replace('!`', '?`');
  writeFileSync(source, text);
  utimesSync(source, new Date(2000, 0, 1), new Date(2000, 0, 1));
  const { out } = await start('cy');
  expect(out.text).toBe('hello, cy?');
});

test('an entry esbuild cannot bundle faithfully (a relative require.resolve) runs through tsx', async () => {
  writeFileSync(join(dir, 'lib', 'where.ts'), "export const where = (): string => require.resolve('./greeting.txt');\n");
  writeFileSync(entry, "import { where } from './lib/where';\nconsole.log(JSON.stringify({ text: where(), argv1: process.argv[1] }));\n");
  const { out, stderr } = await start();
  expect(stderr).toContain('not compiled, running it through tsx: relative require.resolve');
  expect(out.text).toBe(join(dir, 'lib', 'greeting.txt'));
  expect(out.argv1).toBe(entry);
});
