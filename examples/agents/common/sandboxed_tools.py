"""The two tools every agent-framework sample exposes, as sandboxed functions (python-sb
partial mode). Each framework's sample wraps these in its own tool declaration; the bodies run
in a worker under their own rule file, never in the agent's process:

- ``fetch_webpage(url)``: urllib under ``fetch.py-sandboxes``, whose ``net=`` lines grant the
  only hosts it may reach: a prompt-injected URL to ``localhost``, the intranet or a cloud
  metadata address is refused by the kernel provider and the Python layer;
- ``evaluate_expression(expr)``: ``pysandboxes.guarded_eval`` under the ``eval-*`` lines of
  ``calculator.py-sandboxes``: arithmetic and a few math functions; an injected
  ``__import__('os')`` is refused before it runs, a CPU or memory bomb is stopped by the
  budgets, and the worker's timeout is the hard stop.

Both return a dict that says where they ran (``sandboxed``: ``is_in_sandbox()`` in the body),
so a test -- or a suspicious operator -- can see that no tool ran in the agent's process.
``tool_sandboxes()`` is the context the tools run in; ``tool_error_text(exc)`` is what a
sample hands the model when a tool fails: the error and the rule that refused it, or the line
that would allow it.
"""

from __future__ import annotations

import math
import os
import urllib.request
from pathlib import Path
from typing import Any

from pysandboxes import guarded_eval, is_in_sandbox, sandbox, sandboxes
from pysandboxes.errors import SandBoxError, sandbox_denials

HERE = Path(__file__).parent
FETCH_RULES = str(HERE / "fetch.py-sandboxes")
CALCULATOR_RULES = str(HERE / "calculator.py-sandboxes")
DEFAULT_RULES = str(HERE / "default.py-sandboxes")
# Seconds a tool call may take before its worker is killed (the tests shorten them).
FETCH_TIMEOUT = float(os.environ.get("AGENTS_FETCH_TIMEOUT", "20"))
CALCULATOR_TIMEOUT = float(os.environ.get("AGENTS_CALCULATOR_TIMEOUT", "5"))
MAX_PAGE = 100_000


@sandbox(rules=FETCH_RULES, timeout=FETCH_TIMEOUT)
def fetch_webpage(url: str) -> dict[str, object]:
    """Fetch a web page (at most 100 KB of it) and return its text."""

    # The worker's timeout (killing it) is the stop; the socket timeout is only a backstop.
    with urllib.request.urlopen(url, timeout=2 * FETCH_TIMEOUT) as response:
        text = response.read(MAX_PAGE).decode("utf-8", "replace")
    return {"sandboxed": is_in_sandbox(), "status": response.status, "text": text}


@sandbox(rules=CALCULATOR_RULES, timeout=CALCULATOR_TIMEOUT)
def evaluate_expression(expr: str) -> dict[str, object]:
    """Evaluate an arithmetic expression: numbers, + - * / // % **, comparisons, and abs,
    round, min, max, sum, range, sqrt, pi."""

    value = guarded_eval(expr, names={"sqrt": math.sqrt, "pi": math.pi})
    return {"sandboxed": is_in_sandbox(), "value": value}


def tool_sandboxes() -> sandboxes:
    """The partial-mode context an agent runs its tools in: ``with tool_sandboxes(): ...``.

    Each tool has its own rule file (its own worker); the context's default rules
    (``default.py-sandboxes``) serve no tool and grant nothing.
    """

    return sandboxes(rules=DEFAULT_RULES)


class ToolFailure(Exception):
    """A tool call that failed in the sandbox; its message is what the model reads (for the
    frameworks that hand the model the text of whatever exception a tool raises)."""


def call_tool(function: Any, *args: Any) -> Any:
    """Call a sandboxed tool; a failure the model should read becomes :class:`ToolFailure`
    with :func:`tool_error_text`, chained to the original exception (other exceptions, bugs of
    the agent, pass through)."""

    try:
        return function(*args)
    except Exception as exc:
        if is_tool_failure(exc):
            raise ToolFailure(tool_error_text(exc)) from exc
        raise


def is_tool_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure the model should read (a refusal anywhere in the chain --
    urllib wraps a refused connection in ``URLError`` --, a sandbox error such as a timeout, or
    the tool's own error on bad input), rather than a bug of the agent."""

    return isinstance(
        exc, (SandBoxError, OSError, ValueError, ArithmeticError, SyntaxError)
    ) or bool(sandbox_denials(exc))


def tool_error_text(exc: BaseException) -> str:
    """What the model reads for a failed tool call: the error, and for each refusal the rule
    that refused it (and where it comes from) or the line that would allow it."""

    text = f"{type(exc).__name__}: {exc}".split("\nTraceback in the sandbox")[0]
    for denial in sandbox_denials(exc):
        if denial.rule:
            line = f"refused by the rule '{denial.rule}' from {denial.origin}"
        else:
            line = f"refused: no rule allows {denial.kind} {denial.target}"
        if denial.suggestion:
            line += f" (the line that would allow it: {denial.suggestion})"
        if line not in text:
            text += "\n" + line
    return text
