#!/usr/bin/env bash
# The browser tests (test/browser) drive Debian's chromium through playwright-core; install it where missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "chromium: $(command -v chromium || echo "$CHROMIUM_PATH")"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing and apt-get is not available: install chromium or set CHROMIUM_PATH" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium
command -v chromium
