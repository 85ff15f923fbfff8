# Installing the Debian packages Sightline's local services come from, when they are missing.
# Sourced by scripts/test.sh (`npm test`), scripts/start-cluster.sh (`npm run start:cluster`) and
# scripts/bench-services.sh (the `bench:*` scripts that start local services):
#   source scripts/debian-packages.sh && ensure_debian_packages redis-server postgresql kcat
# Each name is a Debian package; only the binaries are wanted (no service is started and no
# default PostgreSQL cluster is created by the install). Exits the calling script with 1 when
# a package is missing and cannot be installed (not root, or apt-get failed).

# Whether a package's binary (or library) is there: checked on disk, not with dpkg, so that a
# server installed some other way counts too.
debian_package_present() {
  case "$1" in
    redis-server) command -v redis-server >/dev/null 2>&1 ;;
    postgresql) compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null ;;
    kcat) command -v kcat >/dev/null 2>&1 ;;
    # librdkafka's mock Kafka cluster (tools/local-services/src/kafka-mock-host.ts); kcat depends on it.
    librdkafka1) compgen -G '/usr/lib/*/librdkafka.so.1' >/dev/null || compgen -G '/usr/lib/librdkafka.so.1' >/dev/null ;;
    nginx) [[ -x /usr/sbin/nginx ]] || command -v nginx >/dev/null 2>&1 ;;
    # The browser the posthog-js end-to-end tests drive through playwright-core (tools/testkit/src/chromium.ts).
    chromium) [[ -x /usr/bin/chromium ]] ;;
    *) dpkg -s "$1" >/dev/null 2>&1 ;;
  esac
}

install_debian_packages() {
  local log
  log="$(mktemp)"
  # Only the binaries are wanted: no default cluster on port 5432, and no
  # services started by the packages' install scripts (nginx would take port 80).
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
    echo "installing $* failed (exit $status)" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

ensure_debian_packages() {
  local name missing=()
  for name in "$@"; do
    debian_package_present "$name" || missing+=("$name")
  done
  ((${#missing[@]} == 0)) && return 0
  if [[ "$(id -u)" != 0 ]]; then
    echo "missing Debian packages: ${missing[*]} (run as root to install them, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  install_debian_packages "${missing[@]}"
  local still_missing=()
  for name in "${missing[@]}"; do
    debian_package_present "$name" || still_missing+=("$name")
  done
  if ((${#still_missing[@]} > 0)); then
    echo "still missing after install: ${still_missing[*]}" >&2
    exit 1
  fi
}
