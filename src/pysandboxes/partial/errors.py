"""The errors of partial mode: every one a :class:`~pysandboxes.SandBoxError`."""

from __future__ import annotations

from pysandboxes.errors import SandBoxError


class PartialModeError(SandBoxError):
    """Misuse of the partial-mode API: no worker started, a second context with other rules,
    an option of the wrong kind."""


class WorkerDiedError(SandBoxError):
    """The worker ended during the call (at most once: the call is never sent again).

    ``status`` is the exit status, or minus the signal number that killed it (``-9``); ``None``
    when it could not be read.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CallTimeoutError(SandBoxError, TimeoutError):
    """The call ran past its timeout: the worker was killed (and is replaced for the next call)."""


class CallCancelledError(WorkerDiedError):
    """Another call on the same worker was cancelled or timed out, which killed the worker."""


class RestartBudgetExceeded(SandBoxError):
    """The worker died or was killed more often than ``max_restarts`` allows: no new one."""


class ResultTooLargeError(SandBoxError):
    """The result is larger than ``max_result`` bytes (checked in the worker, which sent
    nothing of it)."""


class UnsafeResultError(SandBoxError):
    """The result names a type that ``returns=`` does not accept (it could run code here)."""


class SandboxedError(SandBoxError):
    """An exception raised in the sandbox whose class is not loaded here (or could not be
    rebuilt); ``remote_type`` names it, ``denial`` keeps its refusal."""

    def __init__(self, message: str, *, remote_type: str = "", denial: object = None) -> None:
        super().__init__(message, denial=denial)  # type: ignore[arg-type]
        self.remote_type = remote_type
