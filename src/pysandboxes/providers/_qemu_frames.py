"""The one channel between python-sb's relay and the guest of ``os-sandbox=qemu``.

Everything that crosses the VM boundary besides the 9p share travels on one virtio-serial port
(a socketpair on the host side) as frames ``TYPE (1 byte) LENGTH (4 bytes, big-endian)
PAYLOAD``:

- before the frames, host -> guest: one line, ``INTERPRETER SOURCE-DIRECTORY\n``, read by the
  initramfs's ``/init`` (a busybox shell) after it asked for it with a ``P`` frame;
- host -> guest: ``C`` the host's clock and fresh randomness, sent when the guest says ``B``
  (:func:`encode_clock`: a VM restored from a saved state holds the snapshot's clock and
  random generator), ``R`` the run (see :func:`encode_run`), ``I`` bytes for the program's stdin,
  ``E`` end of stdin, ``S`` a signal (its number, one byte), ``W`` a window size (rows, columns,
  two 16-bit big-endian numbers);
- guest -> host: ``P`` (``/init``) the guest waits for the parameter line (where a saved state
  is taken), ``B`` the guest is up (the boot watchdog stops), ``O``/``e`` bytes the program
  wrote on stdout/stderr, ``T`` bytes of its terminal (when python-sb's stdio is one: the
  program then has a pseudo-terminal in the guest), ``L`` learning records (the lines the
  Python layer writes on its record descriptor), ``D`` lines of ``--denials`` (the guard appends
  them to a pipe in the guest; the host to the file), ``X`` how the program ended (a signed
  32-bit number: the exit code, or minus the signal that killed it), ``F`` a failure of the
  guest's own set-up (UTF-8 text).

The run description is data only: ``marshal`` of str, bytes, int, lists and dicts, checked on
arrival (as ``launch/wire.py`` checks the policy), never a pickle.

Imported by the guest's init with ``-I -S`` and by the host relay: built-in modules only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

HEADER = 5
#: A frame's payload is at most this long (a stdin chunk, a run description with its memfd).
MAX_PAYLOAD = 64 << 20
HOST_TYPES = frozenset(b"CRIESW")
GUEST_TYPES = frozenset(b"PBOeTLDXF")
#: Bytes of host randomness in a ``C`` frame (the guest's generator is reseeded from them).
ENTROPY_BYTES = 64
#: Version of the run description (the guest refuses another one).
RUN_FORMAT = "pysb-qemu-2"


class FrameError(ValueError):
    """A malformed frame: the channel cannot be trusted any more."""


def encode_clock(time_ns: int, entropy: bytes) -> bytes:
    """The ``C`` payload: the host's wall clock (nanoseconds since the epoch, 8 bytes) and
    :data:`ENTROPY_BYTES` bytes of the host's randomness."""

    if len(entropy) != ENTROPY_BYTES:
        raise ValueError(f"a clock frame carries {ENTROPY_BYTES} bytes of randomness")
    return time_ns.to_bytes(8, "big") + entropy


def decode_clock(payload: bytes) -> tuple[int, bytes]:
    if len(payload) != 8 + ENTROPY_BYTES:
        raise FrameError(f"clock frame of {len(payload)} bytes")
    return int.from_bytes(payload[:8], "big"), payload[8:]


def encode(kind: bytes, payload: bytes = b"") -> bytes:
    """One frame."""

    if len(kind) != 1:
        raise ValueError("a frame type is one byte")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"frame payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return kind + len(payload).to_bytes(4, "big") + payload


def encode_status(status: int) -> bytes:
    """The ``X`` payload: an exit code (0-255) or minus a signal number."""

    return status.to_bytes(4, "big", signed=True)


def decode_status(payload: bytes) -> int:
    if len(payload) != 4:
        raise FrameError("an exit status is 4 bytes")
    return int.from_bytes(payload, "big", signed=True)


class Decoder:
    """Reassembles frames from a byte stream; ``allowed`` is the set of types the peer may send
    (anything else raises :class:`FrameError`)."""

    def __init__(self, allowed: frozenset[int]) -> None:
        self.allowed = allowed
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """The frames completed by ``data`` (possibly none), in order."""

        self._buffer += data
        frames: list[tuple[bytes, bytes]] = []
        while len(self._buffer) >= HEADER:
            kind = self._buffer[0]
            if kind not in self.allowed:
                raise FrameError(f"unexpected frame type {kind!r}")
            size = int.from_bytes(self._buffer[1:HEADER], "big")
            if size > MAX_PAYLOAD:
                raise FrameError(f"frame of {size} bytes exceeds {MAX_PAYLOAD}")
            if len(self._buffer) < HEADER + size:
                break
            frames.append((bytes([kind]), bytes(self._buffer[HEADER : HEADER + size])))
            del self._buffer[: HEADER + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""

        return len(self._buffer)


# -- the run description --------------------------------------------------------------------------

#: Field -> the type it must have after decoding.
RUN_FIELDS: dict[str, type] = {
    "format": str,
    "argv": list,
    "env": dict,
    "cwd": str,
    "uid": int,
    "gid": int,
    "hostname": str,
    "run_fd": int,
    "run_data": bytes,
    "record_fd": int,
    "denials_path": str,
    "tty": list,
    "winsize": list,
    "seccomp": bytes,
    "net": bool,
    "loopback_tcp": list,
}


def encode_run(run: dict[str, Any]) -> bytes:
    """The ``R`` payload for ``run`` (every key of :data:`RUN_FIELDS`)."""

    import marshal

    check_run(run)
    return marshal.dumps(run, 4)


def decode_run(payload: bytes) -> dict[str, Any]:
    """The run description from an ``R`` payload; :class:`FrameError` unless it is exactly the
    expected fields with the expected plain types."""

    import marshal

    try:
        run = marshal.loads(payload)
    except (EOFError, ValueError, TypeError) as exc:
        raise FrameError(f"bad run description: {exc}") from None
    check_run(run)
    return run  # type: ignore[no-any-return]


def check_run(run: object) -> None:
    if type(run) is not dict:
        raise FrameError("the run description is not a dict")
    if set(run) != set(RUN_FIELDS):
        raise FrameError(f"run description fields {sorted(run)} != {sorted(RUN_FIELDS)}")
    for key, kind in RUN_FIELDS.items():
        if type(run[key]) is not kind:
            raise FrameError(f"run description field {key!r} is not a {kind.__name__}")
    if run["format"] != RUN_FORMAT:
        raise FrameError(f"run description format {run['format']!r}, expected {RUN_FORMAT!r}")
    if not run["argv"] or not all(type(a) is str for a in run["argv"]):
        raise FrameError("argv must be a non-empty list of str")
    if not all(type(k) is str and type(v) is str for k, v in run["env"].items()):
        raise FrameError("env must map str to str")
    if not all(type(p) is int and 0 < p < 65536 for p in run["loopback_tcp"]):
        raise FrameError("loopback_tcp must list port numbers")
    if not all(type(fd) is int and 0 <= fd <= 2 for fd in run["tty"]):
        raise FrameError("tty must list standard descriptors")
    size = run["winsize"]
    if size and (len(size) != 2 or not all(type(n) is int and 0 <= n < 65536 for n in size)):
        raise FrameError("winsize must be [rows, columns]")
