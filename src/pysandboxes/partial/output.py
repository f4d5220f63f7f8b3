"""What a worker prints, relayed to the caller's standard error with control sequences made
harmless (issue 25, class 9).

A worker's standard output and error are one socket to the caller (``spawn.start_worker``),
never the caller's own descriptor: a function steered by a model could otherwise write escape
sequences to the user's terminal -- OSC 52 writes the clipboard in many terminals, others retitle
the window, move the cursor over earlier lines or answer back on the terminal's input. The
caller reads that socket and writes the text to ``sys.stderr`` with every control character
but newline and tab shown as an escape (``\\x1b``), C1 controls and bytes that are not UTF-8
included (:func:`neutralise`).

``raw_output=True`` (``sandboxes()``, ``Worker``) keeps the old way: the worker writes to the
caller's standard error itself, byte for byte (for a tool whose colours you want, and trust).

Ordering: a relay thread writes what arrives, and the thread that receives a call's answer first
relays what is already there (:meth:`Relay.drain`), so what a function printed before it returned
is shown before its caller goes on.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import socket
import sys
import threading

#: Characters kept as they are among the controls.
_KEPT = frozenset("\n\t")
#: Most bytes relayed at a time.
_CHUNK = 1 << 16


def _escape(char: str) -> str:
    return char if char in _KEPT else f"\\x{ord(char):02x}"


#: Every C0 and C1 control (and DEL) to its escape, but newline and tab.
_TABLE = {code: _escape(chr(code)) for code in (*range(0x20), *range(0x7F, 0xA0))}


def neutralise(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``."""

    return text.translate(_TABLE)


class Relay:
    """Relays one worker's output socket to ``sys.stderr`` (see the module docstring)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.lock = threading.Lock()
        # A poll object answers "anything to relay?" in a quarter of a microsecond: the
        # drain after every answer costs no exception, nor a lock, when there is nothing.
        self.poller = select.poll()  # type: ignore[attr-defined,unused-ignore]
        self.poller.register(sock, select.POLLIN)  # type: ignore[attr-defined,unused-ignore]
        self.decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
        self.ended = False
        self.thread = threading.Thread(target=self._run, name="pysb-output", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.ended:
            try:
                select.select([self.sock], [], [])
            except (OSError, ValueError):
                break
            self.drain()
        self._close()

    def drain(self) -> None:
        """Relay what the worker wrote so far (never waits for more)."""

        if self.ended:
            return
        # Nothing waiting, and the relay thread is not writing what it took: nothing to do.
        # (In this order: what the thread took, it writes with the lock held.) A poll object
        # refuses a second thread while one polls it (RuntimeError: concurrent poll()
        # invocation: callers of a worker with threads=N drain at once): that thread then
        # takes the locked path, whose reads never wait.
        try:
            waiting = bool(self.poller.poll(0))
        except RuntimeError:
            waiting = True
        if not waiting and not self.lock.locked():
            return
        with self.lock:
            while True:
                try:
                    chunk = self.sock.recv(_CHUNK)
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    self.ended = True
                    _write(neutralise(self.decoder.decode(b"", final=True)))
                    return
                _write(neutralise(self.decoder.decode(chunk)))

    def finish(self, timeout: float = 2.0) -> None:
        """After the worker ended: relay the rest (its children are gone too) and close."""

        self.thread.join(timeout)
        self.ended = True
        self._close()

    def _close(self) -> None:
        with self.lock, contextlib.suppress(OSError):
            self.sock.close()


def _write(text: str) -> None:
    if not text:
        return
    stream = sys.stderr
    try:
        if stream is None:
            raise OSError
        stream.write(text)
        stream.flush()
    except (OSError, ValueError, AttributeError):
        with contextlib.suppress(OSError):
            os.write(2, text.encode("utf-8", "backslashreplace"))
