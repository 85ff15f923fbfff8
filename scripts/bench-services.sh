#!/usr/bin/env bash
# Installs the Debian packages a benchmark's local services come from, when they are missing,
# with the same logic as `npm test` (scripts/debian-packages.sh): the `bench:*` npm scripts that
# start PostgreSQL, Redis or the Kafka mock run it first, e.g.
#   bash scripts/bench-services.sh postgresql kcat && node --import tsx bench/worker.ts
# As for `npm test`, installing needs root; otherwise it names the missing packages and exits 1.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/debian-packages.sh
ensure_debian_packages "$@"
