#!/usr/bin/env bash
# Debian packages the full test suite needs: chromium (browser tests), bubblewrap (the grading
# sandbox) and postgresql (a shared gradebook); the site's MathJax comes from requirements.txt.
# Installs only what is missing; needs root or sudo.
# Exits non-zero, with the command to run, when something stays missing: the tests that need it
# would otherwise skip without a word (the database tests skip when PostgreSQL is absent).
set -euo pipefail

missing() {
  need=()
  [ -x /usr/bin/chromium ] || need+=(chromium)
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  local fonts
  fonts=$(fc-list 2>/dev/null | wc -l || echo 0)
  [ "${fonts:-0}" -gt 0 ] || need+=(fonts-dejavu-core)
  return 0
}

fail() {
  echo "tools/system-packages.sh: $1" >&2
  echo "the tests need these Debian packages; install them as root and run the tests again:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${need[*]}" >&2
  exit 1
}

missing
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  # -n: never wait for a password that nobody will type (CI has no terminal)
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    fail "missing ${need[*]}, and this user can neither install packages nor use sudo without a password"
  fi
fi
echo "installing Debian packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || fail "apt-get update failed"
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || fail "apt-get install failed"
missing
[ ${#need[@]} -eq 0 ] || fail "still missing after apt-get install: ${need[*]}"
