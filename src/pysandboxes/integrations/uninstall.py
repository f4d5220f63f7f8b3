"""``python-sb --uninstall-hook=AGENT [--user]``: see :mod:`pysandboxes.integrations.install`."""

from __future__ import annotations

from pysandboxes.integrations.install import main as _install_main

__all__ = ["main"]


def main(words: list[str]) -> int:
    """Remove the hook registration (and the skill) that ``--install-hook`` wrote."""

    return _install_main(words, remove=True)
