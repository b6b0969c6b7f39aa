"""The execution engine: outputs captured like a Jupyter kernel, and every way a cell can go wrong contained.

One warm parent serves the whole module (its start-up, the imports of torch and friends, is
paid once); hostile cells share a notebook so each run is a few seconds.
"""
from __future__ import annotations

import dataclasses
import json
import multiprocessing
import threading

import pytest

from autograder.checks.core import EVIDENCE_MIME
from autograder.engine import CellResult, Limits, RunResult, WarmPool, default_pool
from autograder.engine import run as engine_run
from autograder.grade.submission import running
from autograder.grade.submission.running import notebook_preloads, run_cells

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("test_engine")]

# A cell that must finish has a minute, however busy the machine; a cell that loops on purpose gets 3 s of its own
# (loops_at), so a run stays a few seconds. Honest cells once shared the 3 s.
FAST = Limits(cell_timeout=60, interrupt_grace=1, output_bytes=50_000, memory_bytes=2 * 2**30, processes=32)


def loops_at(*cells: int) -> Limits:
    """FAST, with ``cells`` (the ones that loop) stopped after 3 s."""
    return dataclasses.replace(FAST, cell_timeouts={i: 3.0 for i in cells})


@pytest.fixture(scope="module", autouse=True)
def warm():
    default_pool().warm(1)


def texts(cell: CellResult, name: str = "stdout") -> str:
    return "".join(o["text"] for o in cell.outputs if o["output_type"] == "stream" and o["name"] == name)


def errors(cell: CellResult) -> list[str]:
    return [o["ename"] for o in cell.outputs if o["output_type"] == "error"]


# ------------------------------------------------------------------------------ outputs

@pytest.fixture(scope="module")
def honest() -> RunResult:
    return run_cells([
        "import numpy as np\nprint('hello')\nnp.arange(3)",
        "import sys\nprint('careful', file=sys.stderr)\n42",
        "from autograder.checks.core import emit\nemit({'check': 'x:y:visible', 'outcomes': [{'value': 3}]})",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('open at cell end')",
        "import matplotlib.pyplot as plt\nplt.figure()\nplt.plot([3, 2, 1])\nplt.show()",
        "1 / 0",
        "import os\nprint(os.environ['AUTOGRADER_MODE'], os.environ['NBGRADER_EXECUTION'], "
        "os.environ['AUTOGRADER_SEED'], os.environ['MPLBACKEND'])",
        "import os\nprint(os.getcwd() == os.environ['HOME'], open('data.txt').read())",
        "from IPython.display import display, HTML\ndisplay(HTML('<b>hi</b>'))",
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]);",
        "import ipywidgets as widgets\nwidgets.IntSlider(value=3)",
        "import json, os\nnb = json.load(open(os.path.join(os.environ['AUTOGRADER_ROOT'], 'solutions', "
        "'01_tokens_and_ids.ipynb')))\nprint(sum(len(c.get('outputs', [])) for c in nb['cells']), "
        "sum(c['cell_type'] == 'code' and bool(''.join(c['source']).strip()) for c in nb['cells']))",
    ], assignment="02_demo", files={"data.txt": b"given file"}, seed=7, limits=FAST)


def test_streams_and_results_are_captured(honest):
    first, second = honest.cells[0], honest.cells[1]
    assert first.status == "ok" and texts(first) == "hello\n"
    result = [o for o in first.outputs if o["output_type"] == "execute_result"]
    assert result[0]["data"]["text/plain"] == "array([0, 1, 2])" and result[0]["execution_count"] == 1
    assert second.status == "ok" and texts(second, "stderr") == "careful\n"  # a warning is just a stream


def test_evidence_is_a_display_output(honest):
    cell = honest.cells[2]
    [out] = [o for o in cell.outputs if o["output_type"] == "display_data"]
    assert out["data"][EVIDENCE_MIME] == {"check": "x:y:visible", "outcomes": [{"value": 3}]}


def test_matplotlib_gives_png_for_open_figures_and_show(honest):
    for cell in honest.cells[3:5]:
        pngs = [o for o in cell.outputs if o["output_type"] == "display_data" and "image/png" in o["data"]]
        assert len(pngs) == 1, cell
        assert pngs[0]["data"]["image/png"].startswith("iVBORw0KGgo")  # base64 of the PNG signature


def test_matplotlib_magic_and_widgets_work(honest):
    magic, widget = honest.cells[9], honest.cells[10]
    assert magic.status == "ok" and any("image/png" in o.get("data", {}) for o in magic.outputs)
    assert widget.status == "ok"
    assert "application/vnd.jupyter.widget-view+json" in widget.outputs[0]["data"]


def test_errors_are_nbformat_error_outputs(honest):
    cell = honest.cells[5]
    assert cell.status == "error"
    [err] = [o for o in cell.outputs if o["output_type"] == "error"]
    assert err["ename"] == "ZeroDivisionError" and err["evalue"] == "division by zero"
    assert isinstance(err["traceback"], list) and err["traceback"]


def test_environment_scratch_and_files(honest):
    assert texts(honest.cells[6]).split() == ["evidence", "autograde", "7",
                                              "module://matplotlib_inline.backend_inline"]
    assert texts(honest.cells[7]) == "True given file\n"
    assert "text/html" in honest.cells[8].outputs[0]["data"]
    json.dumps([c.outputs for c in honest.cells])  # every output is plain JSON for nbformat


@pytest.mark.parametrize("assignment, warm", [("01_tokens_and_ids", "False"), ("02_shapes_and_matmul", "True")])
def test_torch_is_warm_for_the_notebooks_that_use_it(assignment, warm, monkeypatch):
    """01 never imports torch: the warm parents of a class of 01 skip it (1.5-2 core-seconds each); 02's have it
    imported, so its submissions do not import it again, and a 01 submission that does import it still can.
    Its one thread is the grader's doing: the pool starts where two are asked for (tools/test.sh asks one)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(var, "2")
    pool = WarmPool()
    pool.expect(notebook_preloads([assignment]))
    try:
        result = run_cells(["import sys\nprint('torch' in sys.modules)",
                            "import torch\nprint(torch.get_num_threads(), int(torch.tensor([2, 3]).prod()))"],
                           assignment=assignment, limits=Limits(cell_timeout=60), pool=pool)
    finally:
        pool.shutdown()
    assert [c.status for c in result.cells] == ["ok", "ok"], result.cells
    assert texts(result.cells[0]) == f"{warm}\n" and texts(result.cells[1]) == "1 6\n"


def test_notebook_10s_transformers_comes_preloaded_and_offline():
    """Does a submission's child find transformers' GPT-2 and Llama already imported by the warm parent (each
    notebook-10 submission would otherwise pay about 2.5 s of CPU for them), with the model hub switched off,
    and build a GPT-2 from a configuration?"""
    pool = WarmPool()
    pool.expect(notebook_preloads(["10_decoder_block"]))  # what grade does before a class with notebook 10
    try:
        result = run_cells([
            "import sys\n"
            "from huggingface_hub import constants  # read from the environment once, when the warm parent imported it\n"
            "print(all(m in sys.modules for m in ('transformers.models.gpt2.modeling_gpt2', "
            "'transformers.models.llama.modeling_llama')), constants.HF_HUB_OFFLINE)\n"
            "from transformers import GPT2Config, GPT2LMHeadModel\n"
            "model = GPT2LMHeadModel(GPT2Config(vocab_size=11, n_positions=4, n_embd=8, n_layer=1, n_head=2))\n"
            "print(sum(p.numel() for p in model.parameters()))",
        ], assignment="10_decoder_block", limits=Limits(cell_timeout=60), pool=pool)
    finally:
        pool.shutdown()
    assert result.cells[0].status == "ok", result.cells[0].outputs
    assert texts(result.cells[0]).split() == ["True", "True", "1008"]


def test_earlier_solutions_come_with_their_code_and_without_their_outputs(honest):
    """A run of 02 may import 01's solution cells (notebooks reuse earlier ones); their outputs are left out."""
    outputs, code = map(int, texts(honest.cells[11]).split())
    assert outputs == 0 and code > 0


def test_a_run_says_what_it_cost(honest):
    """Does a run report its CPU by phase (for `grade --profile`), the cells' own time among them?"""
    costs = honest.costs
    assert {"fork", "sandbox", "cells", "evidence"} <= set(costs)
    assert all(v >= 0 for v in costs.values()) and costs["cells"] > 0 and costs["fork"] > 0


def test_a_failed_cells_traceback_is_formatted_once_as_jupyter_shows_it():
    """The output carries IPython's traceback as a notebook shows it (the failing line marked); IPython's copy
    for its history (which grading keeps none of) is not formatted a second time: with torch loaded each
    formatting costs some 15 ms, most of what a failed cell costs a blank submission."""
    result = run_cells([
        "ip = get_ipython()\nformatted = []\nreal = ip.InteractiveTB.structured_traceback\n"
        "def counting(*args, **kwargs):\n    formatted.append(1)\n    return real(*args, **kwargs)\n"
        "ip.InteractiveTB.structured_traceback = counting",
        "def stub():\n    raise NotImplementedError()\nstub()",
        "print(len(formatted))",
    ], assignment="02_demo", limits=FAST)
    failed = result.cells[1]
    assert failed.status == "error" and errors(failed) == ["NotImplementedError"]
    shown = "\n".join(next(o for o in failed.outputs if o["output_type"] == "error")["traceback"])
    assert "----> 3 stub()" in shown and "raise NotImplementedError()" in shown, shown
    assert texts(result.cells[2]) == "1\n", result.cells[2]


def test_the_module_of_a_cells_frame_is_found_as_inspect_finds_it():
    """Tracebacks ask inspect.getmodule for each frame; the grading shell answers a cell's frame without walking
    sys.modules again when nothing was imported since the last walk, and must answer as inspect does: None
    for a cell, and the module once one is loaded from that pseudo-file."""
    result = run_cells([
        "import inspect, sys\nhere = sys._getframe()\n"
        "print(getattr(inspect.getmodule, 'remembers_cells', False), inspect.getmodule(here), "
        "inspect.getmodule.__wrapped__(here), inspect.getmodule(here))",
        "import types\nmade = types.ModuleType('made_up')\nmade.__file__ = '<made-up>'\nsys.modules['made_up'] = made\n"
        "ns = {}\nexec(compile('import sys\\nframe = sys._getframe()', '<made-up>', 'exec'), ns)\n"
        "print(inspect.getmodule(ns['frame']) is made, inspect.getmodule.__wrapped__(ns['frame']) is made)",
        "import numpy\nprint(inspect.getmodule(numpy.ones) is inspect.getmodule.__wrapped__(numpy.ones))",
    ], assignment="02_demo", limits=FAST)
    assert [texts(c) for c in result.cells] == ["True None None None\n", "True True\n", "True\n"], result.cells


# ------------------------------------------------------------------------------ survival

@pytest.fixture(scope="module")
def hostile() -> RunResult:
    return run_cells([
        "x = 1",                                                                              # 0
        "while True:\n    pass",                                                              # 1 interrupted
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:\n    time.sleep(0.05)",                                                  # 2 killed
        "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
        "    except KeyboardInterrupt:\n        pass",                                        # 3 killed
        "import os\nos._exit(3)",                                                             # 4 crashed
        "import ctypes\nctypes.string_at(0)",                                                 # 5 segfault
        "import sys\nsys.exit(1)",                                                            # 6 error
        "name = input('your name? ')",                                                        # 7 error
        "block = bytearray(16 * 2**30)",                                                      # 8 MemoryError
        "import os\nwhile True:\n    os.fork()",                                              # 9 fork bomb
        "import sys\nfor _ in range(2000):\n    sys.stdout.write('flood ' * 100)\nprint('done')",  # 10 cut
        "print('still here', x)",                                                             # 11
    ], assignment="02_demo", limits=loops_at(1, 2, 3, 9), max_restarts=6)


def test_infinite_loop_is_interrupted_and_later_cells_run(hostile):
    cell = hostile.cells[1]
    assert cell.status == "timeout" and "interrupted after 3 s" in cell.detail
    assert errors(cell) == ["KeyboardInterrupt"]
    assert hostile.cells[11].status == "ok" and texts(hostile.cells[11]) == "still here 1\n"


@pytest.mark.parametrize("index", [2, 3])
def test_loop_ignoring_the_interrupt_is_killed_and_skipped(hostile, index):
    cell = hostile.cells[index]
    assert cell.status == "timeout"
    assert "ignored the interrupt" in cell.detail and "ran without it" in cell.detail


def test_os_exit_and_segfault_are_crashes(hostile):
    assert hostile.cells[4].status == "crashed" and "status 3" in hostile.cells[4].detail
    assert hostile.cells[5].status == "crashed" and "segmentation fault" in hostile.cells[5].detail


def test_sys_exit_is_an_error_like_in_jupyter(hostile):
    assert hostile.cells[6].status == "error" and errors(hostile.cells[6]) == ["SystemExit"]


def test_input_is_an_error_saying_why(hostile):
    cell = hostile.cells[7]
    assert cell.status == "error" and errors(cell) == ["StdinNotImplementedError"]
    assert "not available while grading" in cell.outputs[-1]["evalue"]


def test_memory_bomb_hits_the_limit(hostile):
    assert hostile.cells[8].status == "error" and errors(hostile.cells[8]) == ["MemoryError"]


def test_the_cells_after_a_memory_bomb_run_with_the_memory_it_held_given_back():
    """A memory bomb that keeps what it took (a global list) ends in a MemoryError with the address space all but
    full: in that process any later cell's allocation was luck (the adversarial class's bomb lost 6 points so in
    half the runs as root without namespaces). The rest of the notebook runs in a fresh process without it."""
    result = run_cells([
        "x = 1",
        "hog = []\nwhile True:\n    hog.append(bytearray(64 * 2**20))",
        "block = bytearray(200 * 2**20)\nprint('after', x, len(block) // 2**20, 'hog' in globals())",
    ], assignment="02_demo", limits=Limits(cell_timeout=20, interrupt_grace=1, memory_bytes=2**30))
    assert result.cells[1].status == "error" and errors(result.cells[1]) == ["MemoryError"], result.cells[1]
    assert result.cells[2].status == "ok" and texts(result.cells[2]) == "after 1 200 False\n", result.cells[2]


def test_fork_bomb_hits_the_process_limit(hostile):
    cell = hostile.cells[9]
    assert cell.status in ("error", "timeout"), cell
    assert cell.status == "timeout" or errors(cell) == ["BlockingIOError"]


def test_what_a_timed_out_cell_started_stops_with_it():
    """Children of a cell that timed out, spinning, would take the cores from the rest of the notebook (and from
    the student graded beside it): they are killed, and reaped, when the cell is interrupted."""
    result = run_cells([
        # (a fork may fail for a moment: as root every sandbox runs as nobody, and RLIMIT_NPROC counts nobody's
        # processes everywhere, also a fork bomb graded beside this test)
        "import os, time\nchildren = 0\nwhile children < 4:\n    try:\n        pid = os.fork()\n"
        "    except BlockingIOError:\n        time.sleep(0.05)\n        continue\n    if pid == 0:\n        break\n"
        "    children += 1\nwhile True:\n    pass",
        "import os\n"
        "def group(pid):\n    try:\n        return os.getpgid(pid)\n    except OSError:\n        return None\n"
        "print(sorted(p for p in map(int, filter(str.isdigit, os.listdir('/proc')))\n"
        "             if p != os.getpid() and group(p) == os.getpgrp()))",
    ], assignment="02_demo", limits=loops_at(0))
    assert result.cells[0].status == "timeout", result.cells[0]
    assert result.cells[1].status == "ok" and texts(result.cells[1]) == "[]\n", result.cells[1]


def test_each_run_leads_a_session_of_its_own():
    """The kernel shares the CPU between sessions before it shares it between processes (autogroups): the runs
    of one warm parent, the students graded beside each other, must not share one, or a fork bomb's children
    take the CPU from the honest student's cells too (their timeouts in the adversarial class)."""
    cell = ("import os\nprint(os.getsid(0) == os.getpid(), open('/proc/self/autogroup').read().split()[0]\n"
            "      if os.path.exists('/proc/self/autogroup') else 'no-autogroups')")
    first, second = (run_cells([cell], assignment="02_demo", limits=FAST) for _ in range(2))
    seen = [texts(r.cells[0]).split() for r in (first, second)]
    assert [leads for leads, _ in seen] == ["True", "True"], seen
    assert seen[0][1] != seen[1][1] or seen[0][1] == "no-autogroups", seen


def test_output_flood_is_cut_with_a_note(hostile):
    cell = hostile.cells[10]
    assert cell.status == "ok" and "output cut" in cell.detail
    assert sum(len(o.get("text", "")) for o in cell.outputs) < FAST.output_bytes + 500
    assert "output cut" in texts(cell, "stderr")


def test_cpu_and_file_size_limits():
    result = run_cells([
        "try:\n    open('big.bin', 'wb').write(b'x' * 2 * 2**20)\nexcept OSError as e:\n    print(e.errno)",
        "while True:\n    pass",
        "print('after')",
    ], assignment="02_demo", limits=Limits(cell_timeout=10, cpu_seconds=1, file_bytes=2**20), max_restarts=1)
    import errno

    assert texts(result.cells[0]) == f"{errno.EFBIG}\n"
    assert result.cells[1].status == "crashed" and "CPU time limit" in result.cells[1].detail
    assert texts(result.cells[2]) == "after\n"


def test_every_cell_has_a_result_in_order(hostile):
    assert [c.index for c in hostile.cells] == list(range(12))
    assert hostile.problems == []


def test_restarts_are_capped():
    result = run_cells(["import os\nos._exit(1)"] * 4 + ["print('never')"], assignment="02_demo",
                       limits=FAST, max_restarts=2)
    assert [c.status for c in result.cells] == ["crashed", "crashed", "crashed", "skipped", "skipped"]
    assert result.problems and "died 3 times" in result.problems[0]


def test_nothing_leaks_between_submissions():
    first = run_cells(["import numpy as np\nnp.LEAK = 1\nSECRET = 'student a'\n"
                       "open('/tmp/scratch/../left.txt', 'w').write('a') if False else None\n"
                       "open('mine.txt', 'w').write('a')"], assignment="02_demo", limits=FAST)
    second = run_cells(["import os, numpy as np\nprint(hasattr(np, 'LEAK'), 'SECRET' in globals(), "
                        "os.path.exists('mine.txt'))"], assignment="02_demo", limits=FAST)
    assert first.cells[0].status == "ok"
    assert texts(second.cells[0]) == "False False False\n"


# --------------------------------------------------------------------------- fork safety

SOURCES = ["import torch\nt = torch.arange(4.0)\nprint(int(t.sum()), torch.get_num_threads())", "print('x' * 3)"]


def _expect_ok(result: RunResult) -> None:
    assert [c.status for c in result.cells] == ["ok", "ok"]
    assert texts(result.cells[0]) == "6 1\n" and texts(result.cells[1]) == "xxx\n"


def test_two_threads_at_once():
    results: list[RunResult] = []
    threads = [threading.Thread(target=lambda: results.append(run_cells(SOURCES, assignment="02_demo",
                                                                        limits=FAST))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert len(results) == 2
    for r in results:
        _expect_ok(r)
    # a warm parent started from a thread outlives that thread (bubblewrap's --die-with-parent
    # follows the starting thread), so the next call reuses it instead of warming up again
    pool = default_pool()
    assert len(pool._all) >= 2 and all(p.alive() for p in pool._all)


def _in_process(queue) -> None:
    from autograder.engine import shutdown_pool
    from autograder.grade.submission.running import run_cells as run

    try:
        r = run(SOURCES, assignment="02_demo", limits=FAST)
        queue.put([(c.status, c.outputs) for c in r.cells])
    finally:
        shutdown_pool()


def test_a_forked_worker_process_gets_its_own_pool():
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_process, args=(queue,))
    proc.start()
    mine = run_cells(SOURCES, assignment="02_demo", limits=FAST)  # at the same time, from this process
    theirs = queue.get(timeout=300)
    proc.join(timeout=60)
    _expect_ok(mine)
    assert [s for s, _ in theirs] == ["ok", "ok"]


# An interrupt that lands after a cell has returned, while the cell runner reports it (the supervisor's
# SIGINT for a cell that finished just at its timeout, on a loaded machine). A profile hook sends it at that exact
# moment: right after run_cell returns, when the cell runner reads the clock for the cell's time.
STALE_INTERRUPT = (
    "import os, signal, sys, time\n"
    "after = []\n"
    "def hook(frame, event, arg):\n"
    "    if event == 'return' and frame.f_code.co_name == 'run_cell':\n"
    "        after.append(1)\n"
    "    elif after and event == 'c_return' and arg is time.monotonic:\n"
    "        sys.setprofile(None)\n"
    "        os.kill(os.getpid(), signal.SIGINT)\n"
    "sys.setprofile(hook)\n")


def test_an_interrupt_after_the_cell_returned_does_not_lose_its_result():
    run = run_cells([STALE_INTERRUPT, "print('next')"], assignment="02_demo", limits=FAST)
    assert [c.status for c in run.cells] == ["ok", "ok"], run.cells  # it was "skipped: could not get this far"
    assert texts(run.cells[1]) == "next\n"


def test_a_run_that_does_not_draw_figures_shows_each_as_one_line():
    """Limits(draw_figures=False), what `grade` asks by default: both ways a figure reaches the output
    (plt.show() and the flush after a cell) give one text line naming the figure, and no image."""
    run = run_cells([
        "import matplotlib.pyplot as plt\nplt.figure()\nplt.plot([3, 2, 1])\nplt.show()",
        "fig, axes = plt.subplots(1, 2)\naxes[0].plot([1, 2])",
        "print('after')",
    ], assignment="02_demo", limits=dataclasses.replace(FAST, draw_figures=False))
    assert [c.status for c in run.cells] == ["ok", "ok", "ok"]
    shown, flushed = ([o["data"] for o in c.outputs if o["output_type"] == "display_data"] for c in run.cells[:2])
    assert shown == [{"text/plain": "<Figure size 640x480 with 1 Axes (not drawn while grading)>"}]
    assert flushed == [{"text/plain": "<Figure size 640x480 with 2 Axes (not drawn while grading)>"}]
    assert texts(run.cells[2]) == "after\n"


# ------------------------------------------------------------------- one warm-up, forked into the siblings

SYSV_SHM = (
    "import ctypes, ctypes.util\n"
    "libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)\n"
    "KEY, IPC_CREAT = 0x5A6B7C, 0o1000\n")


def test_start_warming_warms_up_once_and_forks_the_others():
    """start_warming(3) pays one warm-up: the other two parents are forked copies of the first, each serving
    its own channel, and all three grade at once; a run of one cannot see the channels of the others."""
    pool = WarmPool()
    try:
        pool.start_warming(3)
        parents = [pool.acquire() for _ in range(3)]
        assert len({id(p) for p in parents}) == 3 and len(pool._all) == 3 and pool._starting == 0
        first = next(p for p in parents if p.siblings)
        assert len(first.siblings) == 2
        # the siblings' count starts at their fork: the warm-up (torch and friends, seconds) is counted once
        assert all(s.warm_cpu < first.warm_cpu / 4 for s in first.siblings), [p.warm_cpu for p in parents]
        for p in parents:
            pool.release(p)
        results: list[RunResult] = []
        probe = ("import os\npipes = 0\nfor f in os.listdir('/proc/self/fd'):\n"
                 "    try:\n        pipes += int(f) > 2 and os.readlink(f'/proc/self/fd/{f}').startswith('pipe:')\n"
                 "    except OSError:\n        pass\nprint(pipes)")
        threads = [threading.Thread(target=lambda: results.append(run_cells([*SOURCES, probe], assignment="02_demo",
                                                                            limits=FAST, pool=pool)))
                   for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert len(results) == 3
        for r in results:
            assert [c.status for c in r.cells] == ["ok", "ok", "ok"], r
            # the cell runner holds its own message pipe only: no warm parent's channel, its own or another's
            assert texts(r.cells[2]) == "1\n", texts(r.cells[2])
        assert len(pool._all) == 3  # nobody had to start a fourth
        busy = [pool.acquire() for _ in range(3)]
        pool.start_warming(3)  # as the schedule does once the references hold parents: three are there
        assert pool._starting == 0 and len(pool._all) == 3
        for p in busy:
            pool.release(p)
    finally:
        pool.shutdown()


def test_a_light_parent_serves_what_needs_no_more_while_the_others_import():
    """start_warming(light=True) starts one more parent with the harness's modules only, beside those that import
    what expect() named: a run that needs nothing more may take it, a run that needs more never does while a
    parent that holds it is coming, and a parent that imports a module for a run is known to hold it after."""
    pool = WarmPool()
    pool.expect(("wave",))  # a module no warm-up imports otherwise (torch would do, at seconds a parent)
    try:
        pool.start_warming(1, light=True)
        pool.start_warming(1, light=True)  # as the schedule does after grade's own call: nothing more starts
        heavy = pool.acquire(frozenset({"wave"}))  # whichever is ready first: the light one never holds wave
        assert not heavy.light and "wave" in heavy.modules
        light = pool.acquire(frozenset())
        assert light.light and "wave" not in light.modules and len(pool._all) == 2 and not pool._coming
        pool.release(light)
        assert pool.acquire(frozenset()) is light  # the only idle one
        pool.release(light)
        pool.release(heavy)
        assert pool.acquire(frozenset()) is light  # both idle: the leanest, whose fork costs less
        pool.release(light)
        assert pool.acquire(frozenset({"wave"})) is heavy  # both idle: the one that holds it
        # with the heavy one busy and nothing coming, the light one imports it for the run, once
        result = run_cells(["import sys\nprint('wave' in sys.modules)"], assignment="01_tokens_and_ids", limits=FAST,
                           pool=pool)
        assert texts(result.cells[0]) == "False\n"  # 01 asks for nothing more
        request_wave = running.request(["import sys\nprint('wave' in sys.modules)"], assignment="01_tokens_and_ids",
                                       limits=FAST)
        request_wave = dataclasses.replace(request_wave, harness=dataclasses.replace(
            request_wave.harness, preload=request_wave.harness.preload + ("wave",)))
        result = engine_run(request_wave, pool=pool)
        assert texts(result.cells[0]) == "True\n" and "wave" in light.modules
        pool.release(heavy)
    finally:
        pool.shutdown()


def test_no_light_parent_when_every_run_needs_the_same():
    pool = WarmPool()
    pool.expect(())  # a class of 01 and 06: nothing beyond the harness, so a light parent would be the same
    try:
        pool.start_warming(1, light=True)
        parent = pool.acquire()
        assert len(pool._all) == 1 and not parent.light
        pool.release(parent)
    finally:
        pool.shutdown()


def test_a_sibling_whose_channel_ends_is_not_handed_out_again():
    pool = WarmPool()
    try:
        pool.start_warming(2)
        a, b = pool.acquire(), pool.acquire()
        sibling = b if a.siblings else a
        assert sibling.alive()
        sibling.close()
        assert not sibling.alive()
        pool.release(sibling)
        pool.release(a if sibling is b else b)
        assert len(pool._idle) == 1
    finally:
        pool.shutdown()


def test_system_v_shared_memory_does_not_outlive_its_run():
    """Each run has its own IPC namespace: a segment one run makes is gone for the next run of the same warm
    parent (and for a sibling's runs, which share its bubblewrap)."""
    make = run_cells([SYSV_SHM + "print(libc.shmget(KEY, 4096, IPC_CREAT | 0o666) >= 0)"], assignment="02_demo",
                     limits=FAST)
    find = run_cells([SYSV_SHM + "print(libc.shmget(KEY, 0, 0) >= 0)"], assignment="02_demo", limits=FAST)
    assert texts(make.cells[0]) == "True\n", make.cells[0]
    assert texts(find.cells[0]) == "False\n", find.cells[0]
