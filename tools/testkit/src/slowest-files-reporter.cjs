// @ts-check
// A jest reporter that prints the slowest test files once the run ends, so the suite's cost stays
// in sight: `npm test` must stay under 20 minutes on 2 cores. scripts/test.sh adds it beside
// jest's default reporter. Plain CommonJS because jest loads reporters with require(), without
// the TypeScript transform the tests get. `npm test` runs jest twice (unit and integration on
// both cores, then e2e and slow on one); with SLOWEST_FILES_CARRY naming a file, each run adds
// its files to those the file holds, so the list printed after the last run covers both.
const fs = require('node:fs');
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
    const all = withCarried(results.testResults, process.env['SLOWEST_FILES_CARRY']);
    const lines = slowestFilesReport(all, this.rootDir, this.count);
    if (lines.length > 0) process.stderr.write(`\n${lines.join('\n')}\n`);
  }
}

/**
 * The files of this run and of the earlier runs the carry file holds (none without one); the
 * carry file then holds them all.
 * @param {Parameters<typeof slowestFilesReport>[0]} results
 * @param {string | undefined} carryFile
 */
function withCarried(results, carryFile) {
  if (!carryFile) return results;
  /** @type {Parameters<typeof slowestFilesReport>[0]} */
  const earlier = fs.existsSync(carryFile) ? JSON.parse(fs.readFileSync(carryFile, 'utf8')) : [];
  const all = [
    ...earlier,
    ...results.map((r) => ({ testFilePath: r.testFilePath, displayName: r.displayName, perfStats: { start: r.perfStats.start, end: r.perfStats.end } })),
  ];
  fs.writeFileSync(carryFile, JSON.stringify(all));
  return all;
}

module.exports = SlowestFilesReporter;
module.exports.slowestFilesReport = slowestFilesReport;
module.exports.withCarried = withCarried;
