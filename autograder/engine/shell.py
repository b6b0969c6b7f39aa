"""Running cells in an IPython InteractiveShell and recording what a Jupyter kernel would have sent.

Per cell: stream outputs (stdout/stderr, consecutive writes merged), display_data and
execute_result with every MIME bundle (the checks' evidence and matplotlib's image/png
included, via the same matplotlib_inline backend ipykernel uses), and errors as nbformat
error outputs. Output beyond ``limit`` bytes per cell is dropped and noted once.
"""
from __future__ import annotations

import base64
import builtins
import getpass
import inspect
import io
import json
import os
import sys
import types
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.error import StdinNotImplementedError
from IPython.core.history import HistoryManager
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Type

INPUT_MESSAGE = ("input() is not available while grading: the notebook must run without anyone typing. "
                 "Put the value in the code instead of asking for it.")


EVIDENCE_BYTES = 64 * 2**20  # per cell: evidence beyond this is dropped (and the test fails closed)


class Recorder:
    """The outputs of the cell now running, capped at ``limit`` bytes."""

    def __init__(self, limit: int = 2 * 2**20, kept_mime: str = ""):
        self.limit = limit
        self.kept_mime = kept_mime  # the harness's outputs (the checks' evidence): kept past the cut
        self.reset()

    def reset(self) -> None:
        self.outputs: list[dict] = []
        self.size = 0
        self.evidence_size = 0
        self.cut = False

    def _room(self, size: int) -> bool:
        if self.cut:
            return False
        if self.size + size > self.limit:
            self.cut = True
            self.outputs.append({"output_type": "stream", "name": "stderr",
                                 "text": f"\n[output cut: this cell produced more than {self.limit} bytes of "
                                         "output; the rest was dropped]\n"})
            return False
        self.size += size
        return True

    def stream(self, name: str, text: str) -> None:
        if not text or self.cut:
            return
        size = len(text.encode("utf-8", "replace"))
        if self.size + size > self.limit:  # keep what fits, then note the cut
            keep = max(0, self.limit - self.size)
            head = text.encode("utf-8", "replace")[:keep].decode("utf-8", "ignore")
            if head:
                self._append_stream(name, head)
                self.size += len(head.encode("utf-8", "replace"))
            self._room(size)
            return
        self.size += size
        self._append_stream(name, text)

    def _append_stream(self, name: str, text: str) -> None:
        last = self.outputs[-1] if self.outputs else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def bundle(self, kind: str, data: dict, metadata: dict | None, count: int | None = None) -> None:
        # the checks' evidence decides the points: a correct answer that prints a lot keeps them, so
        # evidence is kept past the cut, within its own (larger) budget
        evidence = (bool(self.kept_mime) and isinstance(data, dict) and self.kept_mime in data
                    and self.evidence_size < EVIDENCE_BYTES)
        if self.cut and not evidence:
            return
        clean, size = jsonable_bundle(data)
        if evidence:
            self.evidence_size += size
        elif not self._room(size):
            return
        out = {"output_type": kind, "data": clean, "metadata": jsonable_metadata(metadata or {})}
        if kind == "execute_result":
            out["execution_count"] = count
        self.outputs.append(out)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        size = sum(len(t) for t in traceback) + len(evalue)
        if size > self.limit // 4:
            traceback = traceback[:3] + ["[traceback cut]"] + traceback[-3:]
            traceback = [t[:20000] for t in traceback]
            evalue = evalue[:20000]
        # an error is always recorded, even after a flood: it decides the cell's status
        self.outputs.append({"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback})

    def clear(self) -> None:
        self.outputs = []
        self.size = 0


def jsonable_bundle(data: dict) -> tuple[dict, int]:
    clean: dict[str, Any] = {}
    size = 0
    for mime, value in data.items():
        if isinstance(value, (bytes, bytearray, memoryview)):
            value = base64.b64encode(bytes(value)).decode("ascii")
        elif not isinstance(value, str) and not (mime == "application/json" or mime.endswith("+json")):
            value = str(value)
        try:
            text = value if isinstance(value, str) else json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            value = text = str(value)
        size += len(text)
        clean[str(mime)] = value
    return clean, size


def jsonable_metadata(md: dict) -> dict:
    try:
        return json.loads(json.dumps(md, default=str))
    except (TypeError, ValueError):
        return {}


RECORDER = Recorder()


class Stream(io.TextIOBase):
    """sys.stdout / sys.stderr for the cells: text goes to the recorder, never to a file descriptor."""

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        RECORDER.stream(self.name, text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def flush(self) -> None:
        pass


class RecordingDisplayHook(DisplayHook):
    """execute_result outputs, as ipykernel's ZMQShellDisplayHook sends them."""

    def start_displayhook(self) -> None:
        self._bundle = None

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        self._bundle = (format_dict, md_dict)

    def finish_displayhook(self) -> None:
        if self._bundle is not None:
            RECORDER.bundle("execute_result", self._bundle[0], self._bundle[1], self.prompt_count)
        self._bundle = None


class RecordingDisplayPublisher(DisplayPublisher):
    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        RECORDER.bundle("display_data", data, metadata)

    def clear_output(self, wait=False) -> None:
        RECORDER.clear()


def _name_and_value(etype, evalue) -> tuple[str, str]:
    """An exception's type name and message, as an error output carries them."""
    name = getattr(etype, "__name__", str(etype))
    try:
        value = str(evalue)
    except Exception:  # a student's exception whose __str__ fails is still an error
        value = f"<unprintable {name}>"
    return name, value


class GradingShell(InteractiveShell):
    displayhook_class = Type(RecordingDisplayHook)
    display_pub_class = Type(RecordingDisplayPublisher)

    def _showtraceback(self, etype, evalue, stb) -> None:
        RECORDER.error(*_name_and_value(etype, evalue), [str(s) for s in stb])

    def _format_exception_for_storage(self, exception, filename=None, running_compiled_code=False) -> dict:
        """What IPython keeps of a cell's exception for its history (read only by ``%notebook``, which has no
        history to export here): the name and value, without formatting the traceback a second time (the
        first is the output's; each costs some 15 ms with torch loaded, most of what a failed cell costs)."""
        name, value = _name_and_value(type(exception), exception)
        return {"ename": name, "evalue": value, "traceback": []}

    def enable_gui(self, gui=None) -> None:  # no event loop to integrate with, as in ipykernel's inline mode
        pass

    def ask_exit(self) -> None:  # exit() / quit(): nothing to leave, the next cell runs as in a notebook run
        pass

    def init_history(self) -> None:  # no sqlite file, no saving thread (threads and fork do not mix)
        self.history_manager = HistoryManager(shell=self, parent=self, enabled=False)
        self.configurables.append(self.history_manager)


def remember_cells_without_a_module() -> None:
    """Make ``inspect.getmodule`` of a cell's frame cheap, with the same answer.

    IPython's traceback asks for the module of every frame, several times (``getmodule``,
    ``getsourcefile``, ``findsource``). A cell's code comes from a pseudo-file (``<ipython-input-...>``)
    that no module was loaded from, so each ask walks all of ``sys.modules`` (thousands of modules with torch
    loaded, ~1.4 ms a walk, most of the ~10 ms a failed cell costs) and finds nothing. A walk only maps the
    files of modules not mapped before, so while ``sys.modules`` holds exactly the modules of the last walk,
    another would change nothing: the answer is the mapped module of the frame's file, if any, else None (a
    frame has no ``__name__`` to look up in ``__main__``, the function's last resort). Any other object, or a
    changed ``sys.modules``, goes to the real function."""
    real = inspect.getmodule
    if getattr(real, "remembers_cells", False):
        return
    walked: dict | None = None  # sys.modules as the last walk saw it

    def getmodule(object, _filename=None):
        nonlocal walked
        if type(object) is not types.FrameType or not object.f_code.co_filename.startswith("<"):
            return real(object, _filename)
        name = object.f_code.co_filename
        if (_filename is not None and _filename != name) or name in inspect.modulesbyfile \
                or os.path.normcase(os.path.abspath(name)) in inspect.modulesbyfile:
            return real(object, _filename)
        if walked is not None and walked == sys.modules:
            return None
        module = real(object, _filename)  # the file is not mapped: this walks sys.modules
        walked = dict(sys.modules)
        return module

    getmodule.remembers_cells = True
    getmodule.__wrapped__ = real
    inspect.getmodule = getmodule


def make_shell() -> GradingShell:
    """The shell, created once in the warm parent, with matplotlib's inline backend."""
    remember_cells_without_a_module()
    shell = GradingShell.instance(colors="nocolor")
    try:
        shell.enable_matplotlib("inline")
    except Exception:  # matplotlib missing: plotting cells will say so themselves
        pass
    return shell


NOT_DRAWN = " (not drawn while grading)"


def figures_as_text(shell: GradingShell) -> None:
    """Show every matplotlib figure as its one-line repr instead of drawing it (Limits.draw_figures=False).

    Both ways a figure reaches the output, ``plt.show()`` and the inline backend's flush after a cell,
    go through the display formatters: without an image formatter for Figure, nothing is drawn."""
    try:
        from matplotlib.figure import Figure  # late: optional, and the shell is made before any figure
    except ImportError:  # no matplotlib: no figures
        return
    formatters = shell.display_formatter.formatters
    for mime, formatter in formatters.items():
        if mime != "text/plain":
            formatter.pop(Figure, None)
    formatters["text/plain"].for_type(Figure, lambda fig, p, cycle: p.text(repr(fig).rstrip(">") + NOT_DRAWN + ">"))


def no_input(prompt: str = "") -> str:
    raise StdinNotImplementedError(INPUT_MESSAGE)


def prepare_child(shell: GradingShell, limit: int, kept_mime: str = "") -> None:
    """In the forked child: route streams and input to the recorder (which keeps ``kept_mime`` outputs past
    the cut)."""
    RECORDER.limit, RECORDER.kept_mime = limit, kept_mime
    RECORDER.reset()
    sys.stdout = Stream("stdout")
    sys.stderr = Stream("stderr")
    sys.displayhook = shell.displayhook
    builtins.input = no_input
    getpass.getpass = no_input


def run_cell(shell: GradingShell, source: str) -> tuple[str, list[dict]]:
    """Run one cell; return ("ok" | "error", outputs)."""
    RECORDER.reset()
    result = shell.run_cell(source, store_history=True, silent=False)
    failed = result.error_before_exec is not None or result.error_in_exec is not None
    outputs = RECORDER.outputs
    RECORDER.outputs = []
    return ("error" if failed else "ok"), outputs
