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
    "sandbox_denials",
]
