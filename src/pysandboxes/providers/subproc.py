"""``os-sandbox=subprocess``: a fresh interpreter with a clean environment, no kernel boundary.

python-sb ``exec``s ``python [options] launch/boot.py ...`` in its own process (DESIGN decision 4):
no extra process stays, signals and exit statuses are the program's own. What this provider gives
over ``none``: the program's interpreter starts with only the environment ``env=`` grants (also in
``/proc/self/environ``), honours every CPython option, and holds nothing of python-sb's own state.
What it does not give: any kernel restriction. The Python layer (``py-sandbox=true``) is the only
enforcement; hostile code gets around it (SPEC §0).
"""

from __future__ import annotations

from pysandboxes.providers.base import Availability, Launch, Prepared, Provider

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.limits import Notice


class SubprocessProvider(Provider):
    """The command built by the launcher, exec'd as is, with the filtered environment."""

    name = "subprocess"
    kernel = False

    def availability(self) -> Availability:
        return Availability(True)

    def prepare(self, launch: Launch) -> Prepared:
        return Prepared(
            argv=list(launch.child_argv),
            env=dict(launch.env),
            pass_fds=tuple(launch.pass_fds),
            warnings=[
                f"subprocess, py-sandbox=false: {item.text}"
                for item in self.announcements(launch.policy, launch.context.mode)
                if item.at_start
            ],
        )

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        """No kernel boundary: with the Python layer off, that the rules are not enforced at
        all (``limits.no_enforcer``; the limits table is imported only then, so that an
        ordinary run's start-up does not load it)."""

        if policy.py_sandbox.value:
            return []
        from pysandboxes.providers.limits import no_enforcer

        return no_enforcer(policy, mode)

    def explain(self, policy: Policy) -> Sequence[str]:
        python = "on" if policy.py_sandbox.value else "OFF: nothing is enforced"
        return [
            "a separate interpreter started with only the environment env= grants",
            f"no kernel boundary: the Python layer ({python}) is the only enforcement;",
            "  enough against misused legitimate code, not against hostile code",
        ]


PROVIDER = SubprocessProvider()
