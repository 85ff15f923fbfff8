#!/usr/bin/env bash
# The project's test command (`npm test`; CI runs it as root on a fresh Debian 12
# machine after `npm ci`). Installs the services the integration tests need when
# they are missing, typechecks, then runs every jest project (unit + integration).
# Extra arguments go to jest, e.g. `npm test -- tools/testkit`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Debian packages the integration tests' global setup (tools/testkit) starts, and the browser they drive.
missing_packages() {
  command -v redis-server >/dev/null 2>&1 || echo redis-server
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || echo postgresql
  command -v kcat >/dev/null 2>&1 || echo kcat
  # The browser the posthog-js end-to-end tests drive through playwright-core (tools/testkit/src/chromium.ts).
  [[ -x /usr/bin/chromium ]] || echo chromium
}

install_packages() {
  local log
  log="$(mktemp)"
  # Only the binaries are wanted: no default cluster on port 5432, and no
  # services started by the packages' install scripts.
  if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    mkdir -p /etc/postgresql-common
    echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
  fi
  local added_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  local status=0
  {
    apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
  } >"$log" 2>&1 || status=$?
  if ((added_policy)); then rm -f /usr/sbin/policy-rc.d; fi
  if ((status != 0)); then
    cat "$log" >&2
    echo "test.sh: installing $* failed (exit $status)" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

mapfile -t missing < <(missing_packages)
if ((${#missing[@]} > 0)); then
  if [[ "$(id -u)" != 0 ]]; then
    echo "test.sh: missing Debian packages: ${missing[*]} (run as root to install them, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  install_packages "${missing[@]}"
  mapfile -t still_missing < <(missing_packages)
  if ((${#still_missing[@]} > 0)); then
    echo "test.sh: still missing after install: ${still_missing[*]}" >&2
    exit 1
  fi
fi

npx tsc -p tsconfig.json --noEmit
# The web app (DOM and JSX) has its own compiler settings.
npx tsc -p apps/web/tsconfig.json
# PGlite loads parts of itself with dynamic import(), which jest's VM allows only with this flag.
NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings=ExperimentalWarning" npx jest --ci "$@"
