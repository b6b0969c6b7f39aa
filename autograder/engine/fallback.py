"""A plain Jupyter-kernel runner with the engine's contract, for when the warm engine is unavailable.

It is what stock nbgrader does (a fresh kernel per notebook, nbclient's per-cell timeout that
interrupts the kernel and goes on), returning :class:`~.contract.RunResult`. Isolation is only a
scratch folder: the summary says so.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .kernel_client import SlicedWaits
from .contract import CellResult, Harness, Isolation, Limits, RunRequest, RunResult, seeded_environment

ISOLATION = Isolation(kind="none")  # a fresh Jupyter kernel in a scratch folder; no sandbox, no limits
PROBE_SECONDS = 10  # after a timeout, how long the interrupted kernel gets to answer a `pass` before it is given up


class _Client(SlicedWaits):
    """Remembers whether the last cell hit the timeout, so a timeout is not mistaken for an error."""

    timed_out = False

    async def _async_handle_timeout(self, timeout, cell=None):
        self.timed_out = True
        return await super()._async_handle_timeout(timeout, cell)


def _answers(client: _Client) -> bool:
    """Whether the kernel runs a trivial cell again after an interrupt (a loop may ignore SIGINT)."""
    probe = nbformat.v4.new_code_cell("pass")
    # nbclient stores an executed cell back at its index: the probe gets an index of its own, taken away after.
    # (At index -1 it replaced the notebook's last cell, which then ran as `pass`, empty, after a time-out.)
    client.nb.cells.append(probe)
    timeout, client.timeout = client.timeout, PROBE_SECONDS
    client.timed_out = False
    try:
        client.execute_cell(probe, len(client.nb.cells) - 1)
    except (CellTimeoutError, DeadKernelError):
        return False
    finally:
        client.timeout = timeout
        if client.nb.cells and client.nb.cells[-1] is probe:
            client.nb.cells.pop()
    return not client.timed_out


def run_cells(sources: list[str], *, assignment: str = "", files: dict[str, bytes] | None = None, seed: int = 0,
              limits: Limits | None = None, harness: Harness | None = None) -> RunResult:
    """Execute ``sources`` in order in one fresh kernel (:func:`run` of a request made of these)."""
    return run(RunRequest(sources=list(sources), files=dict(files or {}), seed=seed, limits=limits or Limits(),
                          harness=harness or Harness()), label=assignment)


def run(request: RunRequest, *, label: str = "") -> RunResult:
    """Execute ``request.sources`` in order in one fresh kernel; same contract as :func:`.pool.run` (the
    request's files, seed, limits and harness; no sandbox: its hide, keep, solutions and namespaces are not
    used). ``label`` names the scratch folder."""
    limits = request.limits
    cells = [nbformat.v4.new_code_cell(s) for s in request.sources]
    nb = nbformat.v4.new_notebook(cells=list(cells))  # a list of its own: what nbclient does to it leaves `cells` be
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    results: list[CellResult] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"grade-{label}-") as scratch:
        for name, data in request.files.items():
            target = Path(scratch, name)
            if target.resolve().is_relative_to(Path(scratch).resolve()):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        kernel_env = {**os.environ, **seeded_environment(request)}  # the kernel's checks read the seed there
        client = _Client(nb, timeout=limits.kernel_timeout(), allow_errors=True, interrupt_on_timeout=True,
                         error_on_timeout={"ename": "CellTimeoutError",
                                           "evalue": f"interrupted after {limits.first_timeout():g} s",
                                           "traceback": []},
                         kernel_name="python3", resources={"metadata": {"path": scratch}})
        stuck = False
        # After a first time-out, later cells get the shorter limit and time-outs may cost the limits' budget in
        # all, as in the engine (supervisor.py): a function that loops is met again by every cell that calls it.
        spent, later = 0.0, False
        budget = limits.budget()
        # The kernel's own start-up chatter would scribble over the grader's progress line.
        with client.setup_kernel(env=kernel_env, cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            for i, cell in enumerate(cells):
                if stuck:
                    results.append(CellResult(i, "skipped", [], 0.0, "not run: the kernel stopped responding"))
                    continue
                if spent >= budget:
                    results.append(CellResult(i, "skipped", [], 0.0,
                                              "not run: time budget spent (earlier cells of this notebook timed out)"))
                    continue
                client.timed_out = False
                client.timeout = limits.kernel_timeout(later=later, index=i)
                client.error_on_timeout = {"ename": "CellTimeoutError", "evalue": f"interrupted after {client.timeout:g} s",
                                           "traceback": []}
                start = time.monotonic()
                try:
                    client.execute_cell(cell, i)
                except DeadKernelError as exc:
                    results.append(CellResult(i, "crashed", list(cell.get("outputs", [])),
                                              time.monotonic() - start, f"the kernel died: {exc}"))
                    problems.append(f"the kernel died in cell {i}")
                    stuck = True
                    continue
                except CellTimeoutError as exc:  # an IOPub timeout: treat as a timeout of this cell
                    client.timed_out = True
                    problems.append(str(exc).splitlines()[0])
                seconds = time.monotonic() - start
                outputs = list(cell.get("outputs", []))
                if client.timed_out:
                    results.append(CellResult(i, "timeout", outputs, seconds, f"interrupted after {client.timeout:g} s"
                                              + (" (the shorter limit once a cell of this notebook has timed out)"
                                                 if later else "")))
                    spent += seconds
                    later = bool(limits.later_timeout)
                    if spent >= budget:
                        problems.append(f"time-outs cost this notebook {spent:.0f} s, its whole time budget "
                                        f"({limits.timeout_budget:g} s); the cells after them were not run")
                    stuck = not _answers(client)
                    if stuck:
                        problems.append(f"cell {i} ignored the interrupt; the cells after it were not run")
                    continue
                failed = any(o.get("output_type") == "error" for o in outputs)
                results.append(CellResult(i, "error" if failed else "ok", outputs, seconds))
    return RunResult(results, ISOLATION, problems)
