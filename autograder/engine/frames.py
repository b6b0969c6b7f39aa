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
    """Reads frames from a file descriptor without blocking past a deadline.

    Bytes that are not a frame break the stream for good (``broken`` says why): nothing after them
    is believed, but the frames that arrived before them in the same read are still handed out, so
    a cell that writes garbage right after the cell runner said "start" is the cell that gets the blame."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.eof = False
        self.broken = ""

    def _frames(self) -> list[dict]:
        out = []
        while not self.broken and len(self.buf) >= HEADER.size:
            (n,) = HEADER.unpack_from(self.buf)
            if n > MAX_FRAME:
                self._break("frame too large")
                break
            if len(self.buf) < HEADER.size + n:
                break
            body = bytes(self.buf[HEADER.size:HEADER.size + n])
            del self.buf[:HEADER.size + n]
            try:
                obj = json.loads(body)
            except ValueError as exc:  # not JSON, or not UTF-8
                self._break(f"frame is not JSON ({exc})")
                break
            if not isinstance(obj, dict):
                self._break("frame is not an object")
                break
            out.append(obj)
        if self.broken and not out:
            raise ValueError(self.broken)
        return out

    def _break(self, why: str) -> None:
        self.broken = why
        self.buf.clear()

    def pump(self) -> list[dict]:
        """Read what is available now (call after select says readable). The frames before any
        bad bytes come back; the call after them (or one with none before them) raises ValueError."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            self.eof = True
        elif chunk and not self.broken:
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
