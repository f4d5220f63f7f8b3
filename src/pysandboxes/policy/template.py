"""The text of a new rule file: every section explained, with marked places for learned rules.

Learning mode (``pysandboxes.learn``) writes a new ``.py-sandboxes`` with
:func:`render_template`, passing the learned lines of each section named in
:data:`TEMPLATE_SECTIONS`. The lines between :data:`LEARNED_BEGIN` and :data:`LEARNED_END`
comments are *learned* for the parser (``Origin.learned``): an exposed path there that no longer
exists is skipped with a warning instead of refusing the run. An existing file gets a block
between the same markers (``LEARNED_BEGIN`` followed by a date on the opening line).
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["LEARNED_BEGIN", "LEARNED_END", "TEMPLATE_SECTIONS", "render_template"]

#: A comment line *starting* with this opens a learned block (text may follow: a date, a name).
LEARNED_BEGIN = "# --- learned"
#: The comment line that closes a learned block (an unclosed block ends with its file).
LEARNED_END = "# --- end learned ---"

#: The sections of the template, in order; each has one learned block.
#: ``files`` (expose-ro, expose-rw, ignore), ``network`` (net), ``imports`` (python-import),
#: ``environment`` (env, unenv), ``api`` (python-api), ``eval`` (eval-*).
TEMPLATE_SECTIONS: tuple[str, ...] = ("files", "network", "imports", "environment", "api", "eval")

_HEADER = """\
# .py-sandboxes: what the Python program next to this file may do under python-sb.
# One rule per line, key=value, no spaces around '='; '#' starts a comment; ${VAR} and
# ${VAR:-default} read the environment of python-sb. Reference: docs/rules.md.
# What is not granted here is refused. See the effective rules, with where each comes from:
#     python-sb --explain <the same arguments as the run>

# == Shared profiles ==========================================================================
# Rules for every project of this user, then for this whole machine (a missing one is skipped).
# A net=DENY written there wins over any net=ALLOW below. Deleting these lines escapes them.
include "~/.config/py-sandboxes/user-py-sandboxes.profile"
include "/etc/py-sandboxes/global-py-sandboxes.profile"
# Left out on purpose: "./" is resolved from the directory python-sb is started in, not from
# this file's, so whoever runs the program from a directory of their choice could widen these
# rules with a .local.py-sandboxes of their own. Uncomment only for a program you run yourself.
# include "./.local.py-sandboxes"

# == Protection layers ========================================================================
# py-sandbox: the Python layer, checks inside the interpreter (imports, files, network, calls).
# Enough against legitimate code that is misused; a guardrail only against hostile code.
py-sandbox=true
# os-sandbox: the kernel layer (landlock, bwrap, unshare, qemu), needed against hostile code;
# subprocess and none give no kernel boundary. OS_SANDBOX can change it for one run (a
# downgrade that --explain reports): write the provider without ${...} to pin it.
{os_sandbox}
# learn=false locks this file: no learning mode, no command-line or code rules, and a missing
# rule file is an error. Uncomment it once the rules below are reviewed.
# learn=false
"""

_SECTIONS: dict[str, str] = {
    "files": """\
# == Files ====================================================================================
# expose-ro=PATH: a directory or file the program may read; expose-rw=PATH: read and write.
# The longest exposed prefix decides. ~ is home, ./ and bare paths are from the current
# directory. ignore=GLOB hides matching paths (even exposed ones): ignore=.env, ignore=*.pem.
# Python's own installation, certificates, /dev/null and a private temp dir need no rule.
""",
    "network": """\
# == Network ==================================================================================
# net=ACTION|PROTO|HOST|PORTS|DIR, e.g. net=ALLOW|TCP|api.example.com|443|OUT. ACTION ALLOW or
# DENY (a DENY from any file wins); PROTO TCP, UDP or *; HOST an IP, CIDR, name or *; PORTS *,
# N, A-B or a list; DIR OUT (connect), IN (bind, listen) or *. No rule: no network.
""",
    "imports": """\
# == Modules ==================================================================================
# python-import=NAME[, NAME...]: top-level modules the program may import (the standard
# library too); python-import=* allows every module.
""",
    "environment": """\
# == Environment ==============================================================================
# The program sees only the variables granted: env=NAME=value, env=NAME=${NAME} (the host's
# value), env=NAME=${NAME:-default}, env=PAT_*=${PAT_*}. unenv=NAME or unenv=PAT_* removes a
# variable whatever else says.
""",
    "api": """\
# == Sensitive calls ==========================================================================
# Denied by default even when the module is importable. python-api=ALLOW:target or DENY:target,
# target = a function (os.system), a category (process-exec, process-control, privileges,
# threads, native, introspection, dynamic-code, deserialization) or *. A function rule beats
# its category, a category beats *; at the same level DENY wins.
""",
    "eval": """\
# == Dynamically evaluated code ===============================================================
# Without eval-* rules, eval/exec/compile of strings are refused. eval-syntax, eval-call,
# eval-attribute, eval-import, eval-magic list what evaluated code may use; eval-timeout=2s,
# eval-max-iterations, eval-max-call-depth, eval-max-alloc, eval-max-nodes bound it.
""",
}


def render_template(
    *,
    default_provider: str,
    learned_sections: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The commented template of a new rule file.

    ``default_provider`` is ``landlock`` (written ``os-sandbox=${OS_SANDBOX:-landlock}``) or
    ``subprocess`` where Landlock does not work (any provider name is written the same way).
    ``learned_sections`` maps names of :data:`TEMPLATE_SECTIONS` to rule lines (comments
    allowed), written between the learned markers of their section. An unknown section name
    raises ``ValueError``.
    """

    sections = learned_sections or {}
    unknown = sorted(set(sections) - set(TEMPLATE_SECTIONS))
    if unknown:
        raise ValueError(
            f"unknown template sections {unknown}; known: {', '.join(TEMPLATE_SECTIONS)}"
        )
    if not default_provider.isidentifier():
        raise ValueError(f"bad provider name {default_provider!r}")
    out = [_HEADER.replace("{os_sandbox}", f"os-sandbox=${{OS_SANDBOX:-{default_provider}}}")]
    for name in TEMPLATE_SECTIONS:
        out.append("\n" + _SECTIONS[name])
        out.append(f"{LEARNED_BEGIN}: {name} ---\n")
        for line in sections.get(name, ()):
            text = line.rstrip("\n")
            if "\n" in text:
                raise ValueError(f"a learned line holds a line break: {text!r}")
            out.append(text + "\n")
        out.append(LEARNED_END + "\n")
    return "".join(out)
