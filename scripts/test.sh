#!/usr/bin/env bash
# The project's test commands, one per tier (jest.config.js describes the projects):
#   npm run test:quick   scripts/test.sh quick   type-check, lint, unit (no services; under a minute)
#   npm run test:fast    scripts/test.sh fast    the same, then integration
#   npm run test:e2e     scripts/test.sh e2e     type-check, then e2e
#   npm run test:slow    scripts/test.sh slow    type-check, then slow
#   npm test             scripts/test.sh all     type-check, lint, unit and integration on both
#                                                cores, then e2e and slow on both but for the
#                                                timing-sensitive files (run alone), and the slowest
#                                                test files (CI runs this as root on a fresh
#                                                Debian 12 machine after `npm ci`)
# Extra arguments go to jest, e.g. `npm test -- tools/testkit`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

tier="${1:-all}"
shift || true
# Debian packages the global setup (tools/testkit) starts, nginx for the local cluster's fault
# test (test/cluster-faults.slow.test.ts), and the browser the posthog-js and web app tests drive.
# The install logic is shared with `npm run start:cluster` and the benchmarks
# (scripts/bench-services.sh).
service_packages=(redis-server postgresql kcat librdkafka1)
all_packages=("${service_packages[@]}" nginx chromium)
lint=yes
case "$tier" in
  quick) projects=(unit) packages=() ;;
  fast) projects=(unit integration) packages=("${service_packages[@]}") ;;
  e2e) projects=(e2e) packages=("${all_packages[@]}") lint=no ;;
  slow) projects=(slow) packages=("${all_packages[@]}") lint=no ;;
  all) projects=() packages=("${all_packages[@]}") ;;
  *)
    echo "usage: scripts/test.sh quick|fast|e2e|slow|all [jest arguments]" >&2
    exit 2
    ;;
esac

source scripts/debian-packages.sh
ensure_debian_packages "${packages[@]}"

# The checks before jest, two at a time (one per core): the repository's type-check beside the
# web app's (DOM and JSX, its own compiler settings) and then the lint (ESLint and
# dependency-cruiser: import boundaries and cycles). Each output is shown whole, after both end.
# Both tsconfigs check incrementally (build info under node_modules/.cache): a second run
# re-checks only what changed.
checks_dir="$(mktemp -d)"
npx tsc -p tsconfig.json --noEmit >"$checks_dir/typecheck" 2>&1 &
typecheck=$!
{ npx tsc -p apps/web/tsconfig.json && if [[ $lint == yes ]]; then npm run --silent lint; fi; } >"$checks_dir/web-and-lint" 2>&1 &
web_and_lint=$!
checks_failed=0
wait "$typecheck" || checks_failed=1
wait "$web_and_lint" || checks_failed=1
cat "$checks_dir/typecheck" "$checks_dir/web-and-lint"
rm -rf "$checks_dir"
((checks_failed == 0)) || exit 1

# PGlite loads parts of itself with dynamic import(), which jest's VM allows only with this flag.
export NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning"

# Runs jest on the given projects with the given worker count; the extra arguments go before
# --selectProjects, which takes every name after it.
run_jest() {
  local workers=$1
  shift
  local projects_of_run=()
  while (($#)) && [[ $1 != -- ]]; do
    projects_of_run+=("$1")
    shift
  done
  shift || true
  local args=(--ci "$@")
  [[ -n $workers ]] && args+=("--maxWorkers=$workers")
  ((${#projects_of_run[@]})) && args+=(--selectProjects "${projects_of_run[@]}")
  npx jest "${args[@]}"
}

# e2e and slow files that measure latency, startup time or heap, or kill and stop processes: they run
# one at a time so that a neighbour's load cannot move what they measure. Every other e2e and slow
# file (browser pages, SDKs, fuzz and query sweeps) runs on both cores.
serial_files=(
  test/cluster-faults.slow.test.ts
  test/worker-crash.slow.test.ts
  test/exhaustion.e2e.test.ts
  test/distributed.e2e.test.ts
  test/embedded.e2e.test.ts
)

case "$tier" in
  # Unit and integration files share nothing but the services (each file makes its own databases,
  # topics and keys), so they run on both cores; then the e2e and slow files, the serial ones above
  # last and alone. The ten slowest files of all runs print at the end.
  all)
    carry="$(mktemp)"
    rm -f "$carry"
    export SLOWEST_FILES_CARRY="$carry"
    reporters=(--reporters=default --reporters=./tools/testkit/src/slowest-files-reporter.cjs --passWithNoTests)
    serial_pattern="$(IFS='|'; echo "${serial_files[*]//./\\.}")"
    failed=0
    run_jest 2 unit integration -- "${reporters[@]}" "$@" || failed=1
    run_jest 2 e2e slow -- "${reporters[@]}" --testPathIgnorePatterns "$serial_pattern" '/node_modules/' "$@" || failed=1
    run_jest 1 e2e slow -- "${reporters[@]}" --runTestsByPath "${serial_files[@]}" "$@" || failed=1
    rm -f "$carry"
    exit "$failed"
    ;;
  # Unit and integration files on both cores (jest's default on 2 cores is one worker), as above.
  quick | fast) run_jest 2 "${projects[@]}" -- "$@" ;;
  *) run_jest "" "${projects[@]}" -- "$@" ;;
esac
