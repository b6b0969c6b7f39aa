#!/usr/bin/env bash
# Run what an instructor runs, as an ordinary (non-root) user with the README's own install: a fresh
# copy of this checkout in that user's home, `python3 -m venv .venv && .venv/bin/pip install -r
# requirements.txt` as that user, then the grading, adversarial, validate and setup tests, once with
# the user namespaces this machine allows and once where namespaces are refused (tests/no_userns.py).
# Needs root (it creates the user); tools/test.sh calls it when run as root. Extra arguments go to pytest.
#   tools/test-as-instructor.sh [prepare|run|all] [PYTEST ARGS...]   (default all; tools/test.sh prepares
#   while the main suite runs, then runs)
set -euo pipefail
phase=all
case "${1:-}" in prepare|run|all) phase=$1; shift ;; esac
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "tools/test-as-instructor.sh creates a user: run it as root (tools/test.sh does when it can)" >&2
  exit 2
fi
user=${AUTOGRADER_TEST_USER:-agrader}
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
dest="$home/course"
start=$(date +%s)

# pip's own settings pass through (a machine's local wheel folder, e.g. the CPU build of torch), and tools/test.sh's
# one thread per numerical library when it set them; nothing else
pass_env=()
while IFS= read -r line; do pass_env+=("$line"); done < <(env | grep -E '^(PIP_|(OMP|MKL|OPENBLAS)_NUM_THREADS=)' || true)
as_user() { runuser -u "$user" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 ${pass_env[@]+"${pass_env[@]}"} "$@"; }
python=/usr/bin/python3
if [ "$phase" != run ]; then
# A copy of the working tree as the user would clone it (no .git, no root's virtualenv).
# The last run's copy goes first. A process of that run may still be writing into it (once a kernel or a grading
# worker outlived its test, and rm stopped on "Directory not empty", failing the install): try again a few times,
# then rename it aside (a rename succeeds whatever is open inside) and remove what can be removed, so a leftover
# never fails a fresh install.
remove_copy() {
  local old
  for _ in 1 2 3; do
    rm -rf "$dest" 2>/dev/null && return 0
    sleep 2
  done
  old="$home/course.old.$(date +%s).$$"
  mv "$dest" "$old"
  rm -rf "$old" 2>/dev/null || echo "note: $old is still being written by a process of an earlier run; left there" >&2
}
[ ! -e "$dest" ] || remove_copy
rm -rf "$home"/course.old.* 2>/dev/null || true
mkdir -p "$dest"
# The main suite starts beside this copy and writes bytecode caches into the tree (left out here), so a folder may
# change while tar reads it: GNU tar then exits 1 ("file changed as we read it"), which is no error for this copy
# (a fresh clone's run once failed on it); 2 and above are.
{ tar --warning=no-file-changed --exclude=./.venv --exclude=./.git --exclude=./build --exclude='*/__pycache__' \
    --exclude='*.egg-info' -cf - . || [ $? -eq 1 ]; } | tar -C "$dest" -xf -
chown -R "$user:" "$dest"

# The README's install, as that user, with Debian's interpreter (root's pyenv build is not readable by others).
# pip compiles the bytecode here (~40 of its ~90 core-seconds), and that pays: the course tests below run
# every Python as another user or with PYTHONDONTWRITEBYTECODE=1, so without .pyc files each stock nbgrader
# command would compile its imports again (+3 core-seconds each, measured), some 20 of them in the exchange
# test alone. (Also: Debian's pip 23.0 reads PIP_NO_COMPILE=1 as "compile"; only PIP_NO_COMPILE=0 skips it.)
TIMEFORMAT="instructor $user: installed in %0R s, %0U+%0S core-seconds"
time as_user bash -c "cd '$dest' && $python -m venv .venv && .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt"
fi
[ "$phase" = prepare ] && exit 0

tests=(tests/grade/test_setups.py tests/adversarial tests/test_validate.py)
log="$dest/build"
as_user mkdir -p "$log"
# With TEST_CPU_LOG, each run as the user writes a log of its own (the user cannot write root's), added to
# TEST_CPU_LOG at the end with "[user, run]" before each test's name, so tools/test_cpu.py shows them apart.
cpu_log() { [ -z "${TEST_CPU_LOG:-}" ] || echo "TEST_CPU_LOG=$log/cpu-$1.jsonl"; }
as_user rm -f "$log/cpu-namespaces.jsonl" "$log/cpu-no-namespaces.jsonl"
# Three runs at once, each with its own log, shown in order at the end:
# - with the namespaces this machine allows (two workers);
# - the whole nbgrader exchange, the staff setup and a term on JupyterHub in Chromium with real users (an
#   instructor, a TA, students), on the installation every user can read; it creates those users, so it runs
#   as root with this user's Python, two modules at a time (the Hub's test is the longest);
# - where namespaces are refused (containers, Ubuntu 24.04): the promises that still hold there.
# (tests/course/test_learner_pieces.py needs no other user and already ran in the main suite.)
as_user bash -c "cd '$dest' && $(cpu_log namespaces) .venv/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadgroup --no-loadscope-reorder ${tests[*]} $*" \
  > "$log/namespaces.log" 2>&1 &
with_namespaces=$!
(cd "$dest" && PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadgroup \
  --no-loadscope-reorder tests/course/test_hub.py tests/course/test_exchange.py tests/course/test_staff_setup.py "$@") \
  > "$log/course.log" 2>&1 &
course=$!
status=0
as_user bash -c "cd '$dest' && AUTOGRADER_TEST_NO_NAMESPACES=1 $(cpu_log no-namespaces) .venv/bin/python -m pytest -p no:cacheprovider -q tests/adversarial $*" \
  > "$log/no-namespaces.log" 2>&1 || status=1
wait "$with_namespaces" || status=1
wait "$course" || status=1
for part in namespaces no-namespaces; do
  if [ -n "${TEST_CPU_LOG:-}" ] && [ -f "$log/cpu-$part.jsonl" ]; then
    sed "s|^{\"test\": \"|{\"test\": \"[$user, $part] |" "$log/cpu-$part.jsonl" >> "$TEST_CPU_LOG"
  fi
done
for part in namespaces course no-namespaces; do
  echo "--- $part ($log/$part.log)"
  cat "$log/$part.log"
done
echo "instructor $user: done in $(( $(date +%s) - start )) s" >&2
exit $status
