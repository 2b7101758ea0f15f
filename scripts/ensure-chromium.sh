#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright cannot download its own here).
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "The browser tests need Chromium at $chromium: run 'sudo apt-get install -y chromium' (or set CHROMIUM_PATH)." >&2
  exit 1
fi
echo "installing chromium from Debian for the browser tests" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
