"""The notebook client's waits for a kernel's messages go in one-second slices (autograder/engine/kernel_client.py):
a message one wait missed is found by the next, and the deadline the caller gave still holds."""
from __future__ import annotations

import asyncio
import time
from queue import Empty

from autograder.engine import kernel_client


def test_a_missed_message_is_found_by_the_next_slice_not_at_the_timeout():
    asked: list[float] = []

    async def missing_once(timeout=None):  # a wait that misses the message sleeps to its end, as pyzmq's did
        asked.append(timeout)
        if len(asked) == 1:
            await asyncio.sleep(timeout)
            raise Empty
        return {"msg_type": "execute_reply"}

    start = time.monotonic()
    msg = asyncio.run(kernel_client.in_slices(missing_once)(timeout=120))
    # found by the second wait, one slice in; a bound of minutes (not the 120 s asked) only says it did not wait
    # out the caller's timeout, however busy the machine
    assert msg == {"msg_type": "execute_reply"} and len(asked) == 2 and time.monotonic() - start < 60
    assert all(t <= kernel_client.SLICE_SECONDS for t in asked), asked


def test_the_callers_deadline_still_ends_the_wait():
    asked: list[float] = []

    async def never(timeout=None):
        asked.append(timeout)
        await asyncio.sleep(timeout)
        raise Empty

    start = time.monotonic()
    try:
        asyncio.run(kernel_client.in_slices(never)(timeout=2.5))
    except Empty:
        # the slices add up to the caller's 2.5 s and no more, each asked for what is left (a slow wake-up leaves
        # less for the next): the wall clock only shows it waited that long, never that it stopped in time
        assert sum(asked) <= 2.5 + 1e-6 and len(asked) >= 2, asked
        assert 2.4 <= time.monotonic() - start < 60
    else:
        raise AssertionError("no message came, and the wait did not say so")
