#!/usr/bin/env bash
# Makes a local PostgreSQL 15 (Debian) available for the integration tests and prints the URL
# to put in CONDUIT_TEST_PG_URL. Idempotent: installs only when missing, starts only when down.
#   export CONDUIT_TEST_PG_URL="$(scripts/ci-postgres.sh)"
# Everything except the URL goes to stderr, so the command substitution above captures only it.
# The PostgreSQL tests (server/db, scripts/db-migrate) fail when CONDUIT_TEST_PG_URL is unset;
# CONDUIT_SKIP_PG=1 skips them on purpose. Each test makes and drops its own scratch database.
set -euo pipefail

PG_VERSION="${PG_VERSION:-15}"
PG_CLUSTER="${PG_CLUSTER:-main}"
PG_PASSWORD="${PG_PASSWORD:-postgres}"
PG_PORT="${PG_PORT:-5432}"

log() { echo "ci-postgres: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ ! -x "/usr/lib/postgresql/${PG_VERSION}/bin/postgres" ]; then
  log "installing postgresql-${PG_VERSION} from Debian"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "postgresql-${PG_VERSION}" >&2
fi

if ! pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1 == v && $2 == c { found = 1 } END { exit !found }'; then
  log "creating cluster ${PG_VERSION}/${PG_CLUSTER}"
  as_root pg_createcluster "$PG_VERSION" "$PG_CLUSTER" --port "$PG_PORT" >&2
fi

if ! pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1 == v && $2 == c && $4 == "online" { found = 1 } END { exit !found }'; then
  log "starting cluster ${PG_VERSION}/${PG_CLUSTER}"
  as_root pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start >&2
fi

port="$(pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1 == v && $2 == c { print $3 }')"

# The server may still be finishing startup right after pg_ctlcluster returns.
for _ in $(seq 1 30); do
  if as_postgres psql -p "$port" -qAtc "select 1" >/dev/null 2>&1; then break; fi
  sleep 1
done

# Password auth over TCP (Debian's pg_hba uses scram-sha-256 for 127.0.0.1), so the URL works
# for any OS user. The password is for a throwaway CI cluster only.
as_postgres psql -p "$port" -qAtc "ALTER USER postgres PASSWORD '${PG_PASSWORD}'" >/dev/null

echo "postgresql://postgres:${PG_PASSWORD}@127.0.0.1:${port}/postgres"
