#!/usr/bin/env bash
# Debian packages the full test suite needs: chromium (browser tests), bubblewrap (the grading
# sandbox) and postgresql (a shared gradebook); the site's MathJax comes from requirements.txt.
# Then JupyterHub's proxy, configurable-http-proxy, from npm at the version below (a term on JupyterHub
# and its test, docs/grading.md; JupyterHub itself is in requirements.txt). It needs Node.js 20 or newer.
# And axe-core, the accessibility checker the browser tests inject into every page they open (its
# axe.min.js in npm's global root, where tests/browser/axe.py looks for it).
# Installs only what is missing; needs root or sudo.
# Exits non-zero, with the command to run, when something stays missing: the tests that need it
# would otherwise skip without a word (the database tests skip when PostgreSQL is absent).
set -euo pipefail
PROXY_VERSION=5.2.0  # the newest whose dependencies all run on Node.js 20 (5.3.0's commander asks for 22)
AXE_VERSION=4.10.3  # pinned: a newer axe-core adds rules, which would change what the tests demand unasked

missing() {
  need=()
  [ -x /usr/bin/chromium ] || need+=(chromium)
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  local fonts
  fonts=$(fc-list 2>/dev/null | wc -l || echo 0)
  [ "${fonts:-0}" -gt 0 ] || need+=(fonts-dejavu-core)
  command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
  return 0
}

proxy_missing() {
  [ "$(configurable-http-proxy --version 2>/dev/null)" != "$PROXY_VERSION" ]
}

axe_missing() {
  local root
  root=$(npm root -g 2>/dev/null) || return 0
  [ -f "$root/axe-core/axe.min.js" ] \
    && [ "$(node -p "require('$root/axe-core/package.json').version" 2>/dev/null)" = "$AXE_VERSION" ] && return 1
  return 0
}

fail() {
  echo "tools/system-packages.sh: $1" >&2
  echo "the tests need these; install them as root and run the tests again:" >&2
  [ ${#need[@]} -eq 0 ] || echo "  apt-get update && apt-get install -y --no-install-recommends ${need[*]}" >&2
  ! proxy_missing || echo "  npm install --global configurable-http-proxy@$PROXY_VERSION" >&2
  ! axe_missing || echo "  npm install --global axe-core@$AXE_VERSION" >&2
  exit 1
}

# npm_global PACKAGE VERSION STILL_MISSING_TEST WHY: install PACKAGE@VERSION with npm, globally, and fail saying
# WHY when STILL_MISSING_TEST still succeeds afterwards
npm_global() {
  echo "installing $1 $2 (npm)" >&2
  $sudo npm install --global --no-fund --no-audit --loglevel=error "$1@$2" >/dev/null \
    || { echo "tools/system-packages.sh: npm install -g $1@$2 failed" >&2; exit 1; }
  if "$3"; then
    echo "tools/system-packages.sh: $1 $2 $4" >&2
    exit 1
  fi
}

missing
if [ ${#need[@]} -eq 0 ] && ! proxy_missing && ! axe_missing; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  # -n: never wait for a password that nobody will type (CI has no terminal)
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    fail "something is missing, and this user can neither install packages nor use sudo without a password"
  fi
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || fail "apt-get update failed"
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || fail "apt-get install failed"
  missing
  [ ${#need[@]} -eq 0 ] || fail "still missing after apt-get install: ${need[*]}"
fi
if proxy_missing; then
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$node_major" -lt 20 ]; then
    echo "tools/system-packages.sh: configurable-http-proxy $PROXY_VERSION (JupyterHub's proxy) needs Node.js 20 or" \
         "newer; this machine has $(node --version 2>/dev/null || echo none). Install Node.js 20 (Debian 13's nodejs," \
         "or NodeSource's packages on Debian 12) and run this again." >&2
    exit 1
  fi
  npm_global configurable-http-proxy "$PROXY_VERSION" proxy_missing \
    "is still not on PATH after npm install -g (npm's global bin: $(npm prefix -g 2>/dev/null)/bin)"
fi
if axe_missing; then
  npm_global axe-core "$AXE_VERSION" axe_missing "is not in npm's global root ($(npm root -g 2>/dev/null)) after npm install -g"
fi
