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
    "sandbox_denials",
]


def __getattr__(name: str) -> object:
    # guarded_eval is imported on first use: the eval machinery (ast, decimal...) stays off
    # the start-up path of every run that does not evaluate source text.
    if name == "guarded_eval":
        from pysandboxes.evalguard.api import guarded_eval

        return guarded_eval
    raise AttributeError(f"module 'pysandboxes' has no attribute {name!r}")
