"""Length-prefixed JSON frames: how the engine, the warm parent and its children talk.

A frame is a 4-byte big-endian length followed by that many bytes of JSON encoding one object.
The engine and the warm parent speak them on the warm parent's stdin/stdout; the warm parent
reads its children's over two pipes (see :mod:`.supervisor`).
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

HEADER = struct.Struct(">I")
MAX_FRAME = 512 * 2**20


class ChannelClosed(EOFError):
    pass


_dumps = json.dumps  # bound once: a cell that replaces json.dumps must not change how results travel


def encode_frame(obj: dict) -> bytes:
    body = _dumps(obj, allow_nan=True).encode()
    return HEADER.pack(len(body)) + body


def write_frame(fd: int, obj: dict, _write=os.write) -> None:
    data = memoryview(encode_frame(obj))
    while data:
        n = _write(fd, data)
        data = data[n:]


class FrameReader:
    """Reads frames from a file descriptor without blocking past a deadline."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def _frames(self) -> list[dict]:
        out = []
        while len(self.buf) >= HEADER.size:
            (n,) = HEADER.unpack_from(self.buf)
            if n > MAX_FRAME:
                raise ValueError("frame too large")
            if len(self.buf) < HEADER.size + n:
                break
            body = bytes(self.buf[HEADER.size:HEADER.size + n])
            del self.buf[:HEADER.size + n]
            obj = json.loads(body)
            if not isinstance(obj, dict):
                raise ValueError("frame is not an object")
            out.append(obj)
        return out

    def pump(self) -> list[dict]:
        """Read what is available now (call after select says readable)."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            self.eof = True
        elif chunk:
            self.buf += chunk
        return self._frames()

    def read_one(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frames = self._frames()
            if frames:
                if len(frames) > 1:  # put the rest back
                    self.buf[:0] = b"".join(encode_frame(f) for f in frames[1:])
                return frames[0]
            if self.eof:
                raise ChannelClosed("the other side closed the channel")
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], wait)[0]:
                raise TimeoutError("no answer in time")
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
            self.buf += chunk
