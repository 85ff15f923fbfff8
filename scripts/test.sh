#!/usr/bin/env bash
# The project's test command (`npm test`; CI runs it as root on a fresh Debian 12
# machine after `npm ci`). Installs the services the integration tests need when
# they are missing, typechecks, then runs every jest project (unit, integration, slow).
# Extra arguments go to jest, e.g. `npm test -- tools/testkit`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debian packages the integration tests' global setup (tools/testkit) starts, nginx for the
# local cluster's fault test (test/cluster-faults.slow.test.ts), and the browser the posthog-js
# tests drive. The install logic is shared with `npm run start:cluster` and the benchmarks
# (scripts/bench-services.sh).
source scripts/debian-packages.sh
ensure_debian_packages redis-server postgresql kcat librdkafka1 nginx chromium

npx tsc -p tsconfig.json --noEmit
# The web app (DOM and JSX) has its own compiler settings.
npx tsc -p apps/web/tsconfig.json
# PGlite loads parts of itself with dynamic import(), which jest's VM allows only with this flag.
NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning" npx jest --ci "$@"
