"""The Python layer (SPEC §3): one PEP 578 audit hook, armed before the program runs.

``arm(policy, context)`` is the only entry point; ``launch/child.py`` calls it once, before any
program code, when ``py-sandbox`` is on or the run learns or audits. The modules:

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

__all__ = ["arm"]


def arm(policy: Policy, context: RunContext) -> None:
    """Install the audit hook (and the wrappers) for ``policy``; call once, before the program.

    In ``enforce`` mode every access the rules do not grant raises a ``Rule*Error``; in
    ``learn``/``audit`` mode nothing is refused and accesses are written to
    ``context.record_fd`` (audit adds the denial the rules would have made).
    """

    from pysandboxes.guard.hook import install
    from pysandboxes.policy.model import set_display_home

    set_display_home(context.home)  # origins as ~/... (SPEC §2.1), without reading HOME here
    install(policy, context)
