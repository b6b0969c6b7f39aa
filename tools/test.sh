#!/usr/bin/env bash
# The project's test command: system packages first (when missing), then the whole suite on all cores.
# As root it also runs what an instructor runs as an ordinary user (tools/test-as-instructor.sh: a user
# created for it, the README's install as that user, grading with and without user namespaces, the
# nbgrader exchange with real users, a term on JupyterHub in Chromium). That phase runs beside the main
# suite rather than after it: its install waits on the network and disk, and its serial parts would
# otherwise leave a core idle at the end.
# Extra arguments go to pytest, e.g. `tools/test.sh -m "nb04 and not slow"` (then only the main suite runs).
# TEST_CPU_LOG=<file> records every test's core-seconds (tools/test_cpu.py sums them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/system-packages.sh
py=.venv/bin/python
[ -x "$py" ] || py=python3
export PATH="$(dirname "$(readlink -f "$py")"):$(pwd)/.venv/bin:$PATH"
# Bytecode caches may be written (some shells set PYTHONDONTWRITEBYTECODE=1; this machine's root does): without
# them each pytest process rewrites the assertions of every test module again (2 of the 6.5 core-seconds a
# collection takes) and every grading worker and kernel compiles autograder's modules from source. They go
# to __pycache__/, which git ignores; the instructor's copy leaves them out.
unset PYTHONDONTWRITEBYTECODE
# One thread per numerical library in every process the suite starts (nbval's kernels, the students' image,
# stock nbgrader, the graders): the suite already runs a test on every core, and PyTorch's OpenMP threads would
# only spin against each other (nbval of notebook 10: 62 core-s with two threads a kernel, 55 with one, the
# machine shared). The stored outputs were made with the threads a laptop has, so nbval also proves they do
# not depend on the count. tests/grade/test_engine.py sets two to prove the grader sets one itself.
# (The cores are counted first: GNU nproc reports OMP_NUM_THREADS when it is set, and one worker took the suite.)
cores=$(nproc)
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
start=$(date +%s)
# The machine's CPU over the run, from /proc/stat: busy and idle core-seconds (a busy machine's other work
# counts too; on CI's machine there is none). Issue 48's measure: the suite within 600 busy core-seconds.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat 2>/dev/null || echo "0 0"; }
read -r busy0 idle0 <<< "$(cpu_ticks)"
cpu_said() {
  local busy1 idle1 hz
  read -r busy1 idle1 <<< "$(cpu_ticks)"
  hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
  echo "$(( (busy1 - busy0) / hz )) busy core-s, $(( (idle1 - idle0) / hz )) idle (the machine's, /proc/stat)"
}
as_instructor=0
if [ "$(id -u)" -eq 0 ] && [ $# -eq 0 ] && [ "${AUTOGRADER_SKIP_INSTRUCTOR:-0}" = 0 ]; then
  as_instructor=1
  mkdir -p build
  rm -f build/instructor.log
  ( if bash tools/test-as-instructor.sh prepare > build/instructor-install.log 2>&1; then
      bash tools/test-as-instructor.sh run > build/instructor.log 2>&1
    else
      echo "the ordinary user's install failed:" > build/instructor.log
      tail -30 build/instructor-install.log >> build/instructor.log
      exit 1
    fi ) &
  instructor=$!
fi
# What the ordinary user's run repeats with nothing of root's own to prove is left to it: tests/test_validate.py
# (a learner's validate; every one of its tests runs there, none skipped, and validating as root through the
# grader's sandbox stays proven here by tests/test_predictions.py and tests/grade/test_manual_answers.py).
# tests/adversarial and tests/grade/test_setups.py stay in both runs: as root they prove the README's first row
# (student code in bubblewrap as nobody), as the user the other two.
leave_to_user=()
[ "$as_instructor" = 0 ] || leave_to_user=(--ignore=tests/test_validate.py)
status=0
# --no-loadscope-reorder: work goes out in tests/conftest.py's order, the longest first
"$py" -m pytest -n "$cores" --dist loadgroup --no-loadscope-reorder --durations=15 ${leave_to_user[@]+"${leave_to_user[@]}"} "$@" || status=$?
echo "main suite: $(( $(date +%s) - start )) s; $(cpu_said)"
if [ "$as_instructor" = 1 ]; then
  wait "$instructor" || status=1
  echo "===== as an ordinary instructor (tools/test-as-instructor.sh; log in build/instructor.log) ====="
  grep -v '^\.*\s*\[ *[0-9]*%\]$' build/instructor.log || true
  echo "everything: $(( $(date +%s) - start )) s; $(cpu_said)"
fi
exit $status
