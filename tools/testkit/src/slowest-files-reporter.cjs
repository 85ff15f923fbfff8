// @ts-check
// A jest reporter that prints the slowest test files once the run ends, so the suite's cost stays
// in sight: `npm test` must stay under 20 minutes on 2 cores. scripts/test.sh adds it beside
// jest's default reporter. Plain CommonJS because jest loads reporters with require(), without
// the TypeScript transform the tests get.
const path = require('node:path');

const DEFAULT_COUNT = 10;

/**
 * @param {{ testFilePath: string; displayName?: string | { name: string }; perfStats: { start: number; end: number } }[]} results
 * @param {string} rootDir
 * @param {number} count
 * @returns {string[]} one line per file, slowest first, after a heading
 */
function slowestFilesReport(results, rootDir, count = DEFAULT_COUNT) {
  const files = results
    .map((r) => ({
      file: path.relative(rootDir, r.testFilePath),
      project: typeof r.displayName === 'string' ? r.displayName : (r.displayName?.name ?? ''),
      seconds: Math.max(0, r.perfStats.end - r.perfStats.start) / 1000,
    }))
    .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
  if (files.length === 0) return [];
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  const projectWidth = Math.max(...files.map((f) => f.project.length));
  return [
    `Slowest test files (${Math.min(count, files.length)} of ${files.length}; all files took ${total.toFixed(1)} s):`,
    ...files.slice(0, count).map((f) => `${f.seconds.toFixed(1).padStart(8)} s  ${f.project.padEnd(projectWidth)}  ${f.file}`),
  ];
}

class SlowestFilesReporter {
  /** @param {{ rootDir: string }} globalConfig @param {{ count?: number }} [options] */
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.count = options.count ?? DEFAULT_COUNT;
  }

  /** @param {unknown} _contexts @param {{ testResults: Parameters<typeof slowestFilesReport>[0] }} results */
  onRunComplete(_contexts, results) {
    const lines = slowestFilesReport(results.testResults, this.rootDir, this.count);
    if (lines.length > 0) process.stderr.write(`\n${lines.join('\n')}\n`);
  }
}

module.exports = SlowestFilesReporter;
module.exports.slowestFilesReport = slowestFilesReport;
