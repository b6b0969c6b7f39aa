#!/usr/bin/env bash
# The project's test command: system packages first (when missing), then the whole suite on all cores.
# Extra arguments go to pytest, e.g. `tools/test.sh -m "nb04 and not slow"`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/system-packages.sh
py=.venv/bin/python
[ -x "$py" ] || py=python3
export PATH="$(dirname "$(readlink -f "$py")"):$(pwd)/.venv/bin:$PATH"
exec "$py" -m pytest -n "$(nproc)" --dist loadgroup "$@"
