"""tkinter's Tcl interpreter: its file, process and socket commands, hidden.

``_tkinter.create`` (what ``tkinter.Tcl()`` and ``tkinter.Tk()`` call) makes a full Tcl
interpreter. Its commands reach the system from C, with no audit event: ``exec`` starts
processes, ``open`` reads and writes files (and ``open |cmd`` runs one), ``socket`` connects,
``file delete``/``rename``/``copy``/``mkdir``/``link``/``attributes``/``tempfile`` change the
tree, ``cd`` changes the process's directory, ``load`` loads a shared object, ``source``
reads a script file, ``glob`` lists directories, ``send`` runs a script in another Tk
application. The program reaches any of them with ``tkapp.eval`` or ``tkapp.call``.

Unless ``python-api=ALLOW:tkinter.Tcl`` (or the ``native`` category) is granted, every new
interpreter is made safe before the program gets it, as Tcl's own safe interpreters are: each
of those commands is *hidden* (``interp hide``: no script can call it, ``rename`` cannot bring
it back) and replaced by a procedure that raises a Tcl error naming the refusal; the
subcommands of ``file`` that write are renamed out of ``::tcl::file`` and hidden too (``file``
itself stays: ``join``, ``split``, ``exists``, ``stat``... are names and metadata); last,
``interp`` itself is hidden, so that no script can expose or invoke a hidden command. The
refusal is reported and learned as ``tkinter.Tcl`` (category ``native``): the program sees a
``TclError`` whose message is the refusal's.

What stays: the language (``expr``, ``string``, ``list``, ``dict``, variables, ``proc``,
``after``...), ``puts``/``gets`` on the standard channels, widgets. What breaks without the
grant: Tcl packages not loaded yet (``package require`` sources or loads them), the autoloaded
library procedures (``clock`` formats, Tk's file dialogs and message boxes), ``loadtk()`` after
``tkinter.Tcl()`` (Tk's start-up script is sourced) and ``~/.TK.tcl`` profiles.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.kit import Kit

#: Global commands hidden (``interp`` is hidden last, after the others).
HIDDEN = (
    "exec",
    "open",
    "socket",
    "glob",
    "cd",
    "load",
    "unload",
    "source",
    "send",
)
#: ``::tcl::file`` subcommands that change the tree or a file's attributes (``file`` is an
#: ensemble over them: called directly, they would bypass the hidden ``file``).
FILE_WRITERS = ("attributes", "copy", "delete", "link", "mkdir", "rename", "tempfile")
#: The Python command the replacement procedures call for the refusal's message.
REFUSED_COMMAND = "::pysandboxes_refused"


def build(kit: Kit) -> Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]:
    """``after(tkapp, args, kwargs)`` for the hidden ``_tkinter.create`` wrapper: makes the
    new interpreter safe (see the module docstring) unless the grant is there. Everything used
    at run time is captured now."""

    audit = kit.audit
    type_, str_, list_ = kit.type, str, list
    base_exception, os_error = BaseException, OSError
    base_str, os_error_str = BaseException.__str__, OSError.__str__
    mro_of = type.__dict__["__mro__"].__get__
    hidden = tuple(HIDDEN)
    file_writers = tuple(FILE_WRITERS)
    refused_command = REFUSED_COMMAND

    def refused(*words: Any) -> str:
        """The refusal's message (a replacement procedure raises it as a Tcl error)."""

        name = words[0] if words and type_(words[0]) is str_ else "?"
        try:
            audit("pysandboxes.tcl", name)
        except base_exception as exc:
            # The C methods: a refusal class's own attributes can be replaced.
            for base in mro_of(type_(exc)):
                if base is os_error:
                    return os_error_str(exc)  # type: ignore[no-any-return]
            return base_str(exc)  # type: ignore[no-any-return]
        return f"python-sb: the Tcl command '{name}' is hidden in this interpreter"

    def after(app: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        granted: list[bool] = list_()
        audit("pysandboxes.tcl.granted", granted)
        if granted == [True]:
            return app
        present = app.eval("info commands")
        app.createcommand(refused_command, refused)
        for sub in file_writers:
            # A global name first: only global commands can be hidden.
            app.eval(f"rename ::tcl::file::{sub} ::pysandboxes_file_{sub}")
            app.eval(f"interp hide {{}} ::pysandboxes_file_{sub} tcl:file:{sub}")
            app.eval(
                f"proc ::tcl::file::{sub} args {{return -code error -errorcode "
                f"{{PYTHON-SB DENIED}} [{refused_command} {{file {sub}}}]}}"
            )
        for name in hidden:
            if name not in app.splitlist(present):
                continue
            app.eval(f"interp hide {{}} {name}")
            app.eval(
                f"proc ::{name} args {{return -code error -errorcode {{PYTHON-SB DENIED}} "
                f"[{refused_command} {name}]}}"
            )
        app.eval("interp hide {} interp")
        app.eval(
            "proc ::interp args {return -code error -errorcode {PYTHON-SB DENIED} "
            f"[{refused_command} interp]}}"
        )
        return app

    return after
