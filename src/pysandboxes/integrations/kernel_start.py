"""The sandboxed kernel's start, inside the sandbox: ipykernel with python-sb's settings.

``python-sb --kernel`` (:mod:`pysandboxes.integrations.kernel`) runs this module's :func:`main`
as its program, with the Python layer armed, so everything below is judged by the rules like
any library code. It starts ``ipykernel``'s ``IPKernelApp`` as ``ipykernel_launcher`` would,
with these differences, each for a reason:

- ``IPYTHONDIR`` and ``MPLCONFIGDIR`` are directories in the private temporary directory: the
  kernel writes no profile, history or font cache in the home directory (the rules need not
  grant it; learning does not learn it), and each kernel starts from a clean profile (no
  startup file or ``ipython_kernel_config.py`` of the host runs in it);
- no debugger: ``debugpy`` sets a trace function when imported (``sys.settrace``, refused as
  introspection), so it is made unimportable and ipykernel runs without it;
- cells are compiled under IPython's own names (``<ipython-input-N-...>``, shown as
  ``Cell In[N]``) rather than ipykernel's file names in the temporary directory, which the
  Python layer would take for code written at run time (``dynamic-code``);
- ``!cmd`` and ``%pip`` start their shell with ``subprocess`` (IPython's ``system_raw``), not on
  a new terminal: the refusal is then python-sb's, naming ``process-exec``;
- the banner (``kernel_info``) and a ``%sandbox`` magic say which rule file, provider and mode
  are in force; a refusal in a cell is shown as the cell's error with python-sb's message (the
  rule, and the line that would allow it) and the cell's line, without the library frames.

The ``--sb-NAME=VALUE`` options (rule file, provider, mode, Python layer, learning output) come
from python-sb's launcher, before ipykernel's own options.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

__all__ = ["banner_line", "main", "sandbox_report"]


def _split_options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    info: dict[str, str] = {}
    rest: list[str] = []
    for word in argv:
        if word.startswith("--sb-") and "=" in word:
            name, _eq, value = word[5:].partition("=")
            info[name] = value
        else:
            rest.append(word)
    return info, rest


def banner_line(info: dict[str, str]) -> str:
    """One line: the rule file, provider, mode and Python layer of this kernel."""

    mode = info.get("mode", "enforce")
    if mode == "learn":
        what = f"LEARNING kernel (everything allowed and recorded, written to {info.get('learn')})"
    elif mode == "audit":
        what = "AUDIT kernel (nothing refused; what the rules would refuse is reported)"
    else:
        what = "sandboxed kernel"
    return (
        f"python-sb: {what}: rules {info.get('rules', '?')}, "
        f"os-sandbox={info.get('provider', '?')}, Python layer {info.get('python-layer', '?')}"
    )


def sandbox_report(info: dict[str, str]) -> str:
    """What ``%sandbox`` prints."""

    lines = [banner_line(info)]
    lines.append(
        "A refusal is the cell's error, naming the rule (or that none allows it) and the line "
        "to add to the rule file. `python-sb --kernel=CONNECTION_FILE --explain` lists every "
        "rule in force with its origin (docs/kernel.md)."
    )
    return "\n".join(lines)


def _plain(text: str) -> str:
    """``text`` without its terminal colour sequences."""

    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def main() -> None:
    """Start the kernel (the program of ``python-sb --kernel``)."""

    info, argv = _split_options(sys.argv[1:])
    private = tempfile.gettempdir()
    for name, folder in (("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib")):
        os.environ[name] = os.path.join(private, folder)
    sys.modules["debugpy"] = None  # type: ignore[assignment]  # see the module docstring
    import warnings

    # jupyter_client lists the host's interfaces when imported (netlink: refused by the kernel
    # layer's seccomp filter); the kernel uses the address of its connection file only.
    warnings.filterwarnings("ignore", "Unexpected error discovering local network interfaces")
    # ipykernel's pipe for the output of forked children binds a random loopback port, which
    # the kernel layer refuses where it filters ports (landlock): such output is not forwarded.
    warnings.filterwarnings("ignore", "Couldn't bind IOPub Pipe")
    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelapp import IPKernelApp
    from IPython.core.compilerop import CachingCompiler
    from traitlets import Type
    from traitlets.config import Config

    class SandboxedKernel(IPythonKernel):  # type: ignore[misc]
        """ipykernel's kernel with IPython's cell names (see the module docstring)."""

        compiler_class = Type(CachingCompiler)  # type: ignore[assignment]

        def _process_children(self) -> list[Any]:
            # ipykernel ends its children at shutdown after listing them through /proc
            # (psutil) and signals them (os.kill): rights a notebook need not have, and that
            # learning would write into its rule file. The sandbox owns the process tree (a
            # PID namespace ends with its last process under bwrap, unshare and qemu).
            return []

    config = Config()
    config.InteractiveShell.banner2 = banner_line(info) + "\n"
    app: Any = IPKernelApp.instance(kernel_class=SandboxedKernel, config=config)
    app.initialize(argv)
    _decorate(app.shell, info)
    app.start()


def _decorate(shell: Any, info: dict[str, str]) -> None:
    """``%sandbox`` and the display of refusals."""

    from pysandboxes.errors import SandBoxError

    def sandbox(line: str = "") -> None:
        """Say which rule file, provider and mode this kernel runs under (python-sb)."""

        print(sandbox_report(info))

    shell.register_magic_function(sandbox, "line", "sandbox")
    # `!cmd` and %pip run through subprocess (IPython's system_raw) rather than ipykernel's
    # pexpect on a new terminal: the Python layer judges the start of the process
    # (process-exec) before the kernel layer refuses the terminal device (landlock: /dev/ptmx),
    # so the cell's error names the rule either way.
    shell.system = shell.system_raw

    def refused(self: Any, etype: Any, value: BaseException, tb: Any, tb_offset: Any = None) -> Any:
        # The cell's frames only: the library frames between the cell and the refusal (IPython's
        # system(), pexpect, subprocess...) say nothing the message does not.
        stb = self.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        kept = [*stb[:2], *(e for e in stb[2:-1] if _plain(e).startswith("Cell In[")), stb[-1]]
        self._showtraceback(etype, value, kept if len(stb) > 2 else stb)
        return kept

    shell.set_custom_exc((SandBoxError,), refused)
