import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** The limit the bundle must stay under, gzipped (JS + CSS + HTML of one first load). */
const BUNDLE_LIMIT_GZIP_BYTES = 300 * 1024;

/** Prints the gzipped size of everything emitted and fails the build past the limit. */
function bundleSizeReport(): Plugin {
  return {
    name: 'sightline-bundle-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      let total = 0;
      for (const file of Object.values(bundle)) {
        const body = file.type === 'chunk' ? file.code : file.source;
        total += gzipSync(typeof body === 'string' ? Buffer.from(body) : Buffer.from(body)).length;
      }
      const kb = (total / 1024).toFixed(1);
      if (total > BUNDLE_LIMIT_GZIP_BYTES) this.error(`web bundle is ${kb} KB gzipped, over the ${BUNDLE_LIMIT_GZIP_BYTES / 1024} KB limit`);
      process.stdout.write(`@sightline/web: bundle ${kb} KB gzipped (limit ${BUNDLE_LIMIT_GZIP_BYTES / 1024} KB)\n`);
    },
  };
}

/**
 * Fails the build on a stylesheet whose braces do not pair up: the minifier accepts one, and every
 * rule after an unclosed block is then silently lost (a merge of two appended blocks did that once).
 */
function balancedStylesheets(): Plugin {
  return {
    name: 'sightline-balanced-css',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('.css')) return null;
      const text = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
      let depth = 0;
      let line = 1;
      for (const char of text) {
        if (char === '\n') line++;
        else if (char === '{') depth++;
        else if (char === '}' && --depth < 0) this.error(`${id}: a '}' with no '{' before it (line ${line} without comments)`);
      }
      if (depth !== 0) this.error(`${id}: ${depth} '{' never closed`);
      return null;
    },
  };
}

export default defineConfig({
  // JSX through esbuild's automatic runtime with Preact: no Babel preset to install.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    // Hashed file names under /assets/: the API serves them as immutable.
    assetsDir: 'assets',
    sourcemap: false,
    reportCompressedSize: false,
  },
  plugins: [balancedStylesheets(), bundleSizeReport()],
});
