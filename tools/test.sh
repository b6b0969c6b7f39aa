#!/usr/bin/env bash
# The project's test command: system packages first (when missing), then the whole suite on all cores.
# As root it also runs what an instructor runs as an ordinary user (tools/test-as-instructor.sh: a user
# created for it, the README's install as that user, grading with and without user namespaces, the
# nbgrader exchange with real users, a term on JupyterHub in Chromium); that user's install runs while
# the main suite does.
# Extra arguments go to pytest, e.g. `tools/test.sh -m "nb04 and not slow"` (then only the main suite runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/system-packages.sh
py=.venv/bin/python
[ -x "$py" ] || py=python3
export PATH="$(dirname "$(readlink -f "$py")"):$(pwd)/.venv/bin:$PATH"
as_instructor=0
if [ "$(id -u)" -eq 0 ] && [ $# -eq 0 ] && [ "${AUTOGRADER_SKIP_INSTRUCTOR:-0}" = 0 ]; then
  as_instructor=1
  mkdir -p build
  bash tools/test-as-instructor.sh prepare > build/instructor-install.log 2>&1 &
  prepare=$!
fi
status=0
"$py" -m pytest -n "$(nproc)" --dist loadgroup --durations=15 "$@" || status=$?
if [ "$as_instructor" = 1 ]; then
  if wait "$prepare"; then
    bash tools/test-as-instructor.sh run || status=1
  else
    echo "the ordinary user's install failed:" >&2
    tail -30 build/instructor-install.log >&2
    status=1
  fi
fi
exit $status
