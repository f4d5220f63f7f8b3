"""``python-sb --install-kernel --rules FILE [--name NAME] [--display-name TEXT] [--user |
--prefix DIR]`` and ``--uninstall-kernel [--name NAME] [--user | --prefix DIR]``.

Writes (or removes) a Jupyter kernelspec whose ``argv`` is
``[python-sb, --kernel={connection_file}, --pysandboxes-config=RULES]``
(:mod:`pysandboxes.integrations.kernel`), with ``interrupt_mode: signal``: the front-end
interrupts a cell with SIGINT, which python-sb passes on under every provider. The rule file
must exist and load without error (an installed kernel never starts learning by surprise); its
absolute path is written, so the kernel runs under the same file from any directory.

Where: ``--user`` in the user's Jupyter data directory (``JUPYTER_DATA_DIR`` or
``~/.local/share/jupyter``), ``--prefix DIR`` under ``DIR/share/jupyter``, and by default under
the prefix of the environment python-sb runs in (``sys.prefix``: a Jupyter of the same
environment lists it). Uses ``jupyter_client``'s ``KernelSpecManager``: ``pip install
pysandboxes[kernel]``. ``--uninstall-kernel`` removes only a kernelspec this command wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any

from pysandboxes.errors import ConfigError
from pysandboxes.launch.argv import PROG
from pysandboxes.launch.cli import say_refused

__all__ = ["MARK", "kernel_argv", "main", "python_sb_command"]

#: The key of ``metadata`` in the kernelspecs this command writes.
MARK = "python-sb"
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_USAGE = (
    f"usage: {PROG} --install-kernel --rules FILE [--name NAME] [--display-name TEXT] "
    "[--user | --prefix DIR]\n"
    f"       {PROG} --uninstall-kernel [--name NAME] [--user | --prefix DIR]"
)


class _Usage(Exception):
    pass


def python_sb_command() -> list[str]:
    """The command that starts python-sb of this installation (the console script next to the
    interpreter, else ``python -m pysandboxes``)."""

    script = os.path.join(os.path.dirname(sys.executable), "python-sb")
    if os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "pysandboxes"]


def kernel_argv(rules: str) -> list[str]:
    """The kernelspec's ``argv`` for the rule file ``rules`` (an absolute path)."""

    return [*python_sb_command(), "--kernel={connection_file}", f"--pysandboxes-config={rules}"]


def _options(words: list[str], *, install: bool) -> dict[str, Any]:
    found: dict[str, Any] = {"name": "python-sb", "user": False, "prefix": None}
    valued = (
        {"--name", "--rules", "--display-name", "--prefix"} if install else {"--name", "--prefix"}
    )
    i = 0
    while i < len(words):
        word = words[i]
        option, eq, value = word.partition("=")
        if option == "--user" and not eq:
            found["user"] = True
        elif option in valued:
            if not eq:
                if i + 1 >= len(words):
                    raise _Usage(f"{option} needs a value")
                i += 1
                value = words[i]
            if not value:
                raise _Usage(f"{option} needs a value")
            found[option[2:].replace("-", "_")] = value
        else:
            raise _Usage(f"unknown option {word}")
        i += 1
    if not _NAME.match(found["name"]):
        raise _Usage(f"--name {found['name']!r}: letters, digits, '.', '_' and '-' only")
    if found["user"] and found["prefix"]:
        raise _Usage("--user and --prefix cannot be combined")
    if install and "rules" not in found:
        raise _Usage("--install-kernel needs --rules FILE (the kernel's rule file)")
    return found


def _manager() -> Any:
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        raise _Usage(
            "jupyter_client is not installed in python-sb's environment: "
            "pip install 'pysandboxes[kernel]' (ipykernel, jupyter_client)"
        ) from None
    return KernelSpecManager()


def _prefix(options: dict[str, Any]) -> str | None:
    if options["user"]:
        return None
    return os.path.abspath(options["prefix"]) if options["prefix"] else sys.prefix


def install(options: dict[str, Any]) -> str:
    """Write the kernelspec; its directory."""

    from pysandboxes.policy import load_policy

    rules = os.path.abspath(os.path.expanduser(options["rules"]))
    if not os.path.isfile(rules):
        raise _Usage(
            f"the rule file {rules} does not exist: write it, or learn it from a notebook with "
            f"{PROG} --notebook NB.ipynb --learn={rules} (docs/kernel.md)"
        )
    load_policy(rules, environ=os.environ, cwd=os.path.dirname(rules))  # ConfigError: refused
    try:
        import ipykernel  # noqa: F401  # the kernel runs in this interpreter
    except ImportError:
        raise _Usage(
            "ipykernel is not installed in python-sb's environment: "
            "pip install 'pysandboxes[kernel]'"
        ) from None
    spec = {
        "argv": kernel_argv(rules),
        "display_name": options.get("display_name") or f"Python (python-sb: {options['name']})",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {MARK: {"rules": rules}, "debugger": False},
    }
    manager = _manager()
    with tempfile.TemporaryDirectory(prefix="pysb-kernelspec-") as source:
        with open(os.path.join(source, "kernel.json"), "w", encoding="utf-8") as handle:
            json.dump(spec, handle, indent=1)
        destination: str = manager.install_kernel_spec(
            source, kernel_name=options["name"], user=options["user"], prefix=_prefix(options)
        )
    return destination


def _spec_dir(options: dict[str, Any]) -> str:
    if options["user"]:
        from jupyter_core.paths import jupyter_data_dir

        base = jupyter_data_dir()
    else:
        base = os.path.join(_prefix(options) or sys.prefix, "share", "jupyter")
    return os.path.join(base, "kernels", options["name"].lower())


def uninstall(options: dict[str, Any]) -> str:
    """Remove the kernelspec written by :func:`install`; its directory."""

    _manager()  # jupyter_client present (the same paths as install)
    folder = _spec_dir(options)
    try:
        with open(os.path.join(folder, "kernel.json"), encoding="utf-8") as handle:
            spec = json.load(handle)
    except FileNotFoundError:
        raise _Usage(f"no kernelspec {options['name']!r} in {folder}") from None
    except (OSError, ValueError) as exc:
        raise _Usage(f"cannot read {folder}/kernel.json: {exc}") from None
    if not isinstance(spec, dict) or MARK not in (spec.get("metadata") or {}):
        raise _Usage(f"{folder} is not a kernelspec written by {PROG} --install-kernel: left as is")
    shutil.rmtree(folder)
    return folder


def main(words: list[str], *, remove: bool = False) -> int:
    """``--install-kernel`` (``remove=False``) or ``--uninstall-kernel``; the exit status."""

    try:
        options = _options(words, install=not remove)
        if remove:
            sys.stdout.write(f"{PROG}: removed the kernelspec {uninstall(options)}\n")
        else:
            folder = install(options)
            sys.stdout.write(
                f"{PROG}: installed the kernelspec {options['name']!r} in {folder} "
                f"(rules {os.path.abspath(options['rules'])})\n"
            )
    except _Usage as exc:
        sys.stderr.write(f"{PROG}: {exc}\n{_USAGE}\n")
        return 2
    except ConfigError as exc:
        say_refused(exc)
        return 2
    except OSError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 2
    return 0
