"""Rule text → :class:`Policy` (SPEC §2): loading, locating, deciding.

``load_policy`` is the one entry point of the launcher; ``pysandboxes.policy.decide`` holds the
precedence rules every enforcer uses. Importing this package is cheap (the model only): the
parser is imported when a file is loaded.
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError, ConfigProblem
from pysandboxes.policy.model import Origin, Policy

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["check_lock", "load_policy", "parse_text"]


def load_policy(
    path: str | None,
    *,
    cli_rules: Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    learned_ok: bool = False,
) -> Policy:
    """Load the rule file ``path`` with its includes, then ``cli_rules`` (origin ``<arg>``).

    ``environ`` (default ``os.environ``) gives the ``${VAR}`` values and ``HOME`` for ``~``;
    ``cwd`` (default ``os.getcwd()``) anchors ``./`` includes and relative paths. ``path=None``
    or a missing file gives the policy of ``cli_rules`` alone (``main_file`` says where the file
    was looked for). ``learned_ok`` turns a missing exposed path into a warning in every rule,
    not only in learned blocks (for learning mode re-reading a file it extends).

    Under the lock (``learn=false`` in a loaded file), command-line rules and ``learn=FILE``
    lines are refused here; :func:`check_lock` covers what the launcher knows (``--learn``, a
    missing rule file). Raises :class:`~pysandboxes.errors.ConfigError` with every problem.
    """

    from pysandboxes.policy.loader import load

    return load(path, cli_rules=cli_rules, environ=environ, cwd=cwd, learned_ok=learned_ok)


def parse_text(
    text: str,
    filename: str,
    *,
    cli_rules: Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    learned_ok: bool = False,
) -> Policy:
    """Like :func:`load_policy`, with ``text`` as the content of the main file ``filename``
    (which need not exist; its includes are read from disk)."""

    from pysandboxes.policy.loader import load

    return load(
        filename,
        cli_rules=cli_rules,
        environ=environ,
        cwd=cwd,
        learned_ok=learned_ok,
        text=text,
    )


def check_lock(
    policy: Policy,
    *,
    learning_requested: bool,
    rule_file_missing: bool,
    audit_requested: bool = False,
) -> None:
    """Refuse what the lock forbids beyond the rules themselves (SPEC §2.6).

    ``learning_requested``: ``--learn`` (or the API's ``learn=``) was given;
    ``rule_file_missing``: the located rule file does not exist (which would start learning);
    ``audit_requested``: ``--audit``, a run that enforces nothing.
    Raises :class:`ConfigError` naming the lock line; does nothing on an unlocked policy.
    """

    if policy.lock is None:
        return
    reason = f"the configuration is locked by learn=false at {policy.lock}"
    problems: list[ConfigProblem] = []
    if learning_requested:
        problems.append(
            ConfigProblem("<arg>", f"learning mode refused: {reason}", Origin(None).sort_key)
        )
    if audit_requested:
        problems.append(
            ConfigProblem(
                "<arg>",
                f"--audit refused (it runs the program with nothing enforced): {reason}",
                Origin(None).sort_key,
            )
        )
    if rule_file_missing:
        where = Origin(policy.main_file, 0) if policy.main_file else Origin(None)
        shown = str(where).removesuffix("(0)")
        problems.append(ConfigProblem(shown, f"the rule file is missing: {reason}", where.sort_key))
    if problems:
        raise ConfigError(problems)
