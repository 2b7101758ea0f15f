#!/usr/bin/env bash
# Makes a local Redis (Debian's redis-server) available for the tests and prints the URL to put
# in CONDUIT_TEST_REDIS_URL. Idempotent and fast: installs only when missing, starts only when
# nothing answers on the port. A throwaway server: loopback only, no persistence.
#   export CONDUIT_TEST_REDIS_URL="$(bash scripts/ci-redis.sh)"
# Everything except the URL goes to stderr, so the command substitution above captures only it.
#
# With credentials, as Conduit requires of REDIS_URL (docs/DEPLOY.md): an ACL user `conduit`
# whose password is generated once and kept beside the server's pid file (mode 600). A server
# this script starts has no other user (the default user is off); one it finds already running
# without a password (an older run of this script) gets the `conduit` user added and is left as
# it was otherwise.
set -euo pipefail

REDIS_PORT="${REDIS_PORT:-6379}"
REDIS_USER=conduit
STATE="${TMPDIR:-/tmp}/conduit-ci-redis-${REDIS_PORT}"

log() { echo "ci-redis: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server from Debian"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq redis-server >&2
fi

if [ ! -s "${STATE}.pass" ]; then
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"${STATE}.pass")
fi
PASSWORD="$(cat "${STATE}.pass")"

open_ping() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null || true; }
# "conduit" only when the password is taken (redis-cli goes on as the default user after a failed AUTH)
whoami() { REDISCLI_AUTH="$PASSWORD" redis-cli --user "$REDIS_USER" -h 127.0.0.1 -p "$REDIS_PORT" ACL WHOAMI 2>/dev/null || true; }

if [ "$(open_ping)" = "PONG" ] && [ "$(whoami)" != "$REDIS_USER" ]; then
  log "a Redis without a password answers on 127.0.0.1:${REDIS_PORT}: adding the ${REDIS_USER} user"
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ACL SETUSER "$REDIS_USER" reset on ">${PASSWORD}" "~*" "&*" "+@all" >/dev/null
fi

if [ "$(whoami)" != "$REDIS_USER" ] && [ "$(open_ping)" != "PONG" ] && ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>&1 | grep -q NOAUTH; then
  log "starting redis-server on 127.0.0.1:${REDIS_PORT}"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize yes \
    --user default off --user "$REDIS_USER" on ">${PASSWORD}" "~*" "&*" "+@all" \
    --logfile "${STATE}.log" --pidfile "${STATE}.pid" >&2
  for _ in $(seq 1 50); do
    if [ "$(whoami)" = "$REDIS_USER" ]; then break; fi
    sleep 0.1
  done
fi

if [ "$(whoami)" != "$REDIS_USER" ]; then
  log "redis-server on 127.0.0.1:${REDIS_PORT} does not take the ${REDIS_USER} user's password (${STATE}.pass); stop it and run this again"
  exit 1
fi

echo "redis://${REDIS_USER}:${PASSWORD}@127.0.0.1:${REDIS_PORT}"
