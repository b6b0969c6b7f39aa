"""A Jupyter notebook client whose waits for the kernel's messages cannot stall: :class:`SlicedWaits`.

On a loaded machine, a wait of nbclient's for the kernel's next message (``get_msg(timeout=...)`` on the
shell or IOPub channel) could miss the message it was waiting for and end only at its timeout, then find the
message there: the run went on that many seconds late, with no error. Measured beside six busy loops on
2 cores, a run of notebook 05 in a plain kernel stalled so in 3 of 5 runs (120 s each with a 120 s timeout,
60 s each in 2 of 5 with 60 s), and twice in the test command (132 s, 180 s); with the waits below, in none
of 6. Each wait here starts again every second until the same deadline, so a missed message is found within
a second. Used wherever the course drives a kernel with nbclient: the grader's fallback engine, ``validate``
and the tests.
"""
from __future__ import annotations

import time
from queue import Empty

from nbclient import NotebookClient

SLICE_SECONDS = 1.0


class SlicedWaits(NotebookClient):
    """nbclient's NotebookClient, its channels' waits in slices of :data:`SLICE_SECONDS` (the module says why)."""

    async def async_start_new_kernel_client(self, **kwargs):
        kc = await super().async_start_new_kernel_client(**kwargs)
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = in_slices(channel.get_msg)
        return kc


def in_slices(get_msg):
    """``get_msg`` (an async channel's) waiting at most a slice at a time, up to the deadline it was given."""

    async def get(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            try:
                return await get_msg(timeout=SLICE_SECONDS if left is None else max(0.0, min(SLICE_SECONDS, left)))
            except Empty:
                if left is not None and left <= SLICE_SECONDS:
                    raise

    return get
