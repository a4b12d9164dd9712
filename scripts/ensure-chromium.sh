#!/usr/bin/env bash
# The browser tests (test/browser) drive Debian's chromium through playwright-core; install it where missing.
# --if-possible (npm test's pretest): where it cannot be installed, say so and succeed; the test run
# then leaves the browser tests out and says loudly that they did not run (vitest.config.ts), except
# on CI (CI=true), where they are required. Playwright's own browser download is no option: it
# comes from outside the npm registry and Debian's packages, which is all these machines reach.
set -euo pipefail
if_possible=""
if [ "${1:-}" = "--if-possible" ]; then if_possible=1; fi
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "chromium: $(command -v chromium || echo "$CHROMIUM_PATH")"
  exit 0
fi
cannot() {
  echo "chromium is missing and $1: install chromium or set CHROMIUM_PATH" >&2
  if [ -n "$if_possible" ] && [ -z "${CI:-}" ]; then exit 0; fi
  exit 1
}
if ! command -v apt-get >/dev/null 2>&1; then cannot "apt-get is not available"; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if [ -n "$if_possible" ] && ! sudo -n true 2>/dev/null; then cannot "installing it needs root (sudo asks for a password)"; fi
  SUDO="sudo"
fi
echo "chromium is missing: installing Debian's (apt-get) for the browser tests"
if ! { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium; }; then
  cannot "apt-get could not install it"
fi
command -v chromium
