"""The Python layer (SPEC §3): one PEP 578 audit hook, armed before the program runs.

``arm(policy, context, eval_extension=)`` is the only entry point; ``launch/child.py`` calls it
once, before any program code, when ``py-sandbox`` is on or the run learns or audits. The
guard knows of guarded evaluation only through ``eval_extension`` (``evalguard/extension.py``,
which the child hands it): it never imports ``evalguard``, a layer above it. The modules:

- ``hook``: assembles the concerns into the one audit hook;
- ``files``, ``network``, ``imports``, ``calls`` (the registry of sensitive functions), ``env``:
  one concern each;
- ``denials``: refusals (``Rule*Error`` with a ``Denial``), ``--denials`` lines, learning lines;
- ``paths``, ``frames``, ``kit``: path resolution, caller identification, captured primitives;
- ``wrappers``: the few functions wrapped because CPython raises no event for them.

See docs/python-layer.md and docs/security-model.md.
"""

from __future__ import annotations

from pysandboxes.policy.model import Policy
from pysandboxes.runtime import RunContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["arm"]


def arm(policy: Policy, context: RunContext, eval_extension: Any = None) -> None:
    """Install the audit hook (and the wrappers) for ``policy``; call once, before the program.

    In ``enforce`` mode every access the rules do not grant raises a ``Rule*Error``; in
    ``learn``/``audit`` mode nothing is refused and accesses are written to
    ``context.record_fd`` (audit adds the denial the rules would have made).

    ``eval_extension`` (``evalguard/extension.py``) is required by a policy with ``eval-*``
    lines, and lets learning and audit record evaluations: without it such a policy is
    refused here (``RuntimeError``: nothing of the program has run), rather than armed with
    its evaluations unguarded.
    """

    if eval_extension is None and policy.eval_rules and context.mode == "enforce":
        raise RuntimeError(
            "python-sb: this policy has eval-* rules and the guard was given no eval extension"
        )
    from pysandboxes.guard.hook import install
    from pysandboxes.policy.model import set_display_home

    set_display_home(context.home)  # origins as ~/... (SPEC §2.1), without reading HOME here
    install(policy, context, eval_extension)
