#!/usr/bin/env bash
# Makes a local Redis (Debian's redis-server) available for the tests and prints the URL to put
# in CONDUIT_TEST_REDIS_URL. Idempotent and fast: installs only when missing, starts only when
# nothing answers on the port. A throwaway server: loopback only, no persistence.
#   export CONDUIT_TEST_REDIS_URL="$(bash scripts/ci-redis.sh)"
# Everything except the URL goes to stderr, so the command substitution above captures only it.
set -euo pipefail

REDIS_PORT="${REDIS_PORT:-6379}"

log() { echo "ci-redis: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server from Debian"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq redis-server >&2
fi

if [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null || true)" != "PONG" ]; then
  log "starting redis-server on 127.0.0.1:${REDIS_PORT}"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize yes \
    --logfile "${TMPDIR:-/tmp}/conduit-ci-redis-${REDIS_PORT}.log" --pidfile "${TMPDIR:-/tmp}/conduit-ci-redis-${REDIS_PORT}.pid" >&2
  for _ in $(seq 1 50); do
    if [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null || true)" = "PONG" ]; then break; fi
    sleep 0.1
  done
fi

if [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null || true)" != "PONG" ]; then
  log "redis-server did not answer on 127.0.0.1:${REDIS_PORT}"
  exit 1
fi

echo "redis://127.0.0.1:${REDIS_PORT}"
