"""``os-sandbox=none``: the Python layer alone, in python-sb's own interpreter.

Nothing is exec'd: the launcher arms the guard and runs the program in the process that parsed
the command line, which saves the start of a second interpreter. The price, documented in
``docs/providers/none.md``:

- CPython options that act when an interpreter starts (``-I``, ``-E``, ``-S``, ``-s``, ``-O``,
  ``-X``, ...) cannot be applied any more and are refused; ``-B``, ``-W``, ``-u``, ``-q``, ``-i``
  and ``-x`` are applied in-process;
- the environment is filtered in ``os.environ`` (and the C library's ``environ``), and the block
  the process started with (``/proc/self/environ``) is overwritten, best effort; but ``PYTHON*``
  variables present when python-sb started have already acted on its interpreter;
- python-sb's own modules stay loaded in the program's interpreter.
"""

from __future__ import annotations

from pysandboxes.providers.base import Availability, Launch, Prepared, Provider

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.limits import Notice

#: Options the in-process run applies itself (see pysandboxes.launch.inprocess.run_in_process).
IN_PROCESS_OPTIONS = frozenset({"-B", "-W", "-u", "-q", "-i"})


class NoneProvider(Provider):
    """Run in-process: ``in_process`` tells the launcher not to exec (``launch/start.py``
    runs the program in its own interpreter, and refuses a partial-mode worker)."""

    name = "none"
    kernel = False
    in_process = True

    def availability(self) -> Availability:
        return Availability(True)

    def prepare(self, launch: Launch) -> Prepared:
        """Nothing to exec: the launcher runs the program in-process with ``env``; the start
        warnings are :meth:`announcements`'s."""

        notices = self.announcements(launch.policy, launch.context.mode)
        warnings = [f"none, py-sandbox=false: {item.text}" for item in notices if item.at_start]
        return Prepared(argv=[], env=dict(launch.env), warnings=warnings)

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        """Nothing is refused by a kernel: with the Python layer off, that the rules are not
        enforced at all (``limits.no_enforcer``)."""

        if policy.py_sandbox.value:  # (the limits table only then: start-up time)
            return []
        from pysandboxes.providers.limits import no_enforcer

        return no_enforcer(policy, mode)

    def explain(self, policy: Policy) -> Sequence[str]:
        python = "on" if policy.py_sandbox.value else "OFF: nothing is enforced"
        return [
            "runs in python-sb's own interpreter: no separate process, no kernel boundary",
            f"the Python layer ({python}) is the only enforcement",
            "the environment is filtered in-process (os.environ, and /proc/self/environ cleared",
            "  best effort); PYTHON* variables set when python-sb started have already acted",
        ]


PROVIDER = NoneProvider()
