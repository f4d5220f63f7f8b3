"""The frame through which evaluated code calls a granted module's functions.

Some library functions write into their caller's globals: ``sympy.var('x')`` reads
``inspect.currentframe().f_back.f_globals`` and stores a ``Symbol`` there. Called from the
guard's own helper, that frame would be :mod:`pysandboxes.evalguard.runtime`, and
``var('need')`` would replace the guard's allocation check by a ``Symbol`` (every later
estimate then passes). So :class:`~pysandboxes.evalguard.runtime._LibraryCall` calls them
through :func:`call`, defined here, in a module that holds nothing else: what a library
writes into this module's globals reaches no code (``call`` reads no global name, and the
guard holds its own reference to it).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def call(function: Any, args: Any, kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, from a frame whose globals are this module's."""

    return function(*args, **kwargs)
