"""python-sb: run Python programs with the rights stated in a ``.py-sandboxes`` rule file.

Public API only; everything else lives in private modules. See README.md and docs/.
"""

from __future__ import annotations

from pysandboxes.errors import (
    ConfigError,
    Denial,
    EvalSyntaxRejected,
    EvalTimeout,
    ProviderUnavailableError,
    RuleApiPermissionError,
    RuleConnectionRefusedError,
    RuleFileNotFoundError,
    RuleImportError,
    RuleModuleNotFoundError,
    RulePermissionError,
    SandBoxError,
    sandbox_denials,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "Denial",
    "EvalSyntaxRejected",
    "EvalTimeout",
    "ProviderUnavailableError",
    "RuleApiPermissionError",
    "RuleConnectionRefusedError",
    "RuleFileNotFoundError",
    "RuleImportError",
    "RuleModuleNotFoundError",
    "RulePermissionError",
    "SandBoxError",
    "__version__",
    "guarded_eval",
    "is_in_sandbox",
    "run",
    "sandbox",
    "sandbox_denials",
    "sandboxes",
]

#: Partial mode's names, loaded on first use: ``import pysandboxes`` stays light (no threads,
#: asyncio or pickle machinery for a program that only needs the errors).
_PARTIAL = frozenset({"sandbox", "sandboxes", "run", "is_in_sandbox"})


def __getattr__(name: str) -> object:
    if name in _PARTIAL:
        from pysandboxes.partial import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    # guarded_eval is imported on first use too: the eval machinery (ast, decimal...) stays
    # off the start-up path of every run that does not evaluate source text.
    if name == "guarded_eval":
        from pysandboxes.evalguard.api import guarded_eval

        return guarded_eval
    raise AttributeError(f"module 'pysandboxes' has no attribute {name!r}")


TYPE_CHECKING = False
if TYPE_CHECKING:
    from pysandboxes.evalguard.api import guarded_eval
    from pysandboxes.partial.api import is_in_sandbox, run, sandbox, sandboxes
