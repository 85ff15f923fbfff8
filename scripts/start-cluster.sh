#!/usr/bin/env bash
# `npm run start:cluster -- [options]`: a Sightline cluster on this machine (docs/running.md,
# "Running several processes"). Installs the Debian packages it runs on when they are missing (the same
# logic as `npm test`), then hands over to tools/cluster/src/main.ts with the arguments.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/debian-packages.sh
# librdkafka1 hosts the Kafka mock (tools/local-services/src/kafka-mock-host.ts).
ensure_debian_packages redis-server postgresql librdkafka1 nginx

exec node --import tsx tools/cluster/src/main.ts "$@"
