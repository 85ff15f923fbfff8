/**
 * Runs a service's TypeScript entry (`npm start`: apps/all-in-one/src/main.ts) from one
 * JavaScript file compiled by esbuild, instead of transpiling and resolving a few hundred
 * source files through tsx on every start.
 *
 *   node scripts/run-compiled.cjs <entry.ts> [args…]    run (compiling first when stale)
 *   node scripts/run-compiled.cjs --build <entry.ts>    compile only (npm install's prepare step)
 *
 * The compiled file never runs stale: beside it a manifest lists every source it was made
 * from with its size and modification time, and a start whose sources differ from the
 * manifest (an edited, added or removed import, a pulled branch) compiles again first (about
 * a third of a second). Only the project's own code (the @sightline/* workspaces) is bundled;
 * packages stay in node_modules and load as usual, except a package a workspace has its own
 * nested copy of, which is bundled so the workspace keeps its version. Each source's
 * `__dirname`/`__filename` stay those of the source file (migrations are read beside their
 * package). If esbuild is missing or the compile fails, the entry runs through tsx as before.
 * Tests run the sources (ts-jest, tsx), never this output.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'node_modules', '.cache', 'sightline', 'build');
/** Changed whenever the compile options below change: older outputs are then stale. */
const FORMAT = 1;

function outputPaths(entry) {
  const name = path
    .relative(ROOT, entry)
    .replace(/\.ts$/, '')
    .replace(/[^A-Za-z0-9_-]+/g, '_');
  return { bundle: path.join(OUT_DIR, `${name}.cjs`), manifest: path.join(OUT_DIR, `${name}.manifest.json`) };
}

function fileStamp(file) {
  const stat = fs.statSync(path.join(ROOT, file));
  return `${stat.size}:${stat.mtimeMs}`;
}

/** True when the compiled file exists and every source it was made from is unchanged. */
function isFresh(paths) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(paths.manifest, 'utf8'));
    if (manifest.format !== FORMAT || !fs.existsSync(paths.bundle)) return false;
    for (const [file, stamp] of Object.entries(manifest.inputs)) if (fileStamp(file) !== stamp) return false;
    return true;
  } catch {
    return false;
  }
}

async function compile(entry, paths) {
  const { createRequire } = require('node:module');
  const esbuild = require('esbuild');
  const rootRequire = createRequire(path.join(ROOT, 'package.json'));
  const packagePlacement = {
    name: 'sightline-packages',
    setup(build) {
      // A package stays external when the bundle (which resolves from the root node_modules)
      // would load the same file as the importing source; a workspace's nested copy is bundled.
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('@sightline/') || args.kind === 'entry-point') return undefined;
        try {
          const fromImporter = createRequire(args.importer).resolve(args.path);
          if (fromImporter === rootRequire.resolve(args.path)) return { path: args.path, external: true };
        } catch {
          return { path: args.path, external: true };
        }
        return undefined;
      });
      // The bundle's own directory is kept before any module code runs; each project source
      // then gets its own directory back under the names it uses.
      build.onLoad({ filter: /\.(ts|js|cjs|mjs)$/ }, (args) => {
        if (args.path.split(path.sep).includes('node_modules')) return undefined;
        let contents = fs.readFileSync(args.path, 'utf8');
        if (/\b__(dirname|filename)\b/.test(contents)) {
          const fromBundle = (p) => JSON.stringify(path.relative(OUT_DIR, p).split(path.sep).join('/'));
          contents =
            `const __dirname = require('node:path').join(__sightlineBundleDir, ${fromBundle(path.dirname(args.path))});` +
            `const __filename = require('node:path').join(__sightlineBundleDir, ${fromBundle(args.path)});\n` +
            contents;
        }
        return { contents, loader: path.extname(args.path).slice(1) === 'ts' ? 'ts' : 'js' };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: paths.bundle,
    write: false,
    sourcemap: 'linked',
    sourcesContent: false,
    banner: { js: 'const __sightlineBundleDir = __dirname;' },
    metafile: true,
    logLevel: 'silent',
    plugins: [packagePlacement],
  });
  // A relative require.resolve would resolve next to the bundle instead of its source.
  const misplaced = result.warnings.filter((w) => w.id === 'require-resolve-not-external');
  if (misplaced.length > 0) throw new Error(`relative require.resolve in ${misplaced.map((w) => w.location?.file).join(', ')}`);
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    inputs[file] = fileStamp(file);
    // A workspace's package.json says where its entry is.
    const workspace = file.match(/^((?:apps|libs|tools)\/[^/]+)\//);
    if (workspace) inputs[`${workspace[1]}/package.json`] = fileStamp(`${workspace[1]}/package.json`);
  }
  inputs[path.relative(ROOT, __filename)] = fileStamp(path.relative(ROOT, __filename));
  // Written aside and renamed into place (the manifest last): processes compiling at the same
  // time never run half a file, and a manifest never vouches for a file not yet there.
  const place = (file, contents) => {
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, contents);
    fs.renameSync(partial, file);
  };
  fs.mkdirSync(OUT_DIR, { recursive: true });
  for (const output of result.outputFiles) place(output.path, output.contents);
  place(paths.manifest, JSON.stringify({ format: FORMAT, entry: path.relative(ROOT, entry), inputs }));
}

async function main() {
  const args = process.argv.slice(2);
  const buildOnly = args[0] === '--build';
  if (buildOnly) args.shift();
  if (!args[0]) throw new Error('usage: node scripts/run-compiled.cjs [--build] <entry.ts> [args…]');
  const entry = path.resolve(args[0]);
  const paths = outputPaths(entry);
  let compiled = isFresh(paths);
  if (!compiled) {
    try {
      await compile(entry, paths);
      compiled = true;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      console.warn(`${path.relative(ROOT, entry)} not compiled, ${buildOnly ? 'a start will try again' : 'running it through tsx'}: ${why}`);
    }
  }
  if (buildOnly) return;
  // The entry sees the arguments it would see run directly.
  process.argv.splice(1, 2, entry);
  if (compiled) {
    process.setSourceMapsEnabled(true);
    require(paths.bundle);
  } else {
    require('tsx/cjs/api').register();
    require(entry);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
