"""``python-sb --uninstall-kernel [--name NAME] [--user | --prefix DIR]``: see
:mod:`pysandboxes.integrations.kernel_install`."""

from __future__ import annotations

from pysandboxes.integrations.kernel_install import main as _install_main

__all__ = ["main"]


def main(words: list[str]) -> int:
    """Remove the kernelspec that ``--install-kernel`` wrote."""

    return _install_main(words, remove=True)
