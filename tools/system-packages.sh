#!/usr/bin/env bash
# Debian packages the full test suite needs: chromium (browser tests), bubblewrap (the grading
# sandbox) and postgresql (a shared gradebook); the site's MathJax comes from requirements.txt.
# Installs only what is missing; needs root or sudo.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
fonts=$(fc-list 2>/dev/null | wc -l || echo 0)
[ "${fonts:-0}" -gt 0 ] || need+=(fonts-dejavu-core)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "missing Debian packages: ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
    exit 0
  fi
fi
echo "installing Debian packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
