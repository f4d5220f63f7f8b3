"""Windows paths in rules and in the guard (issue 19), judged here on Linux.

The Windows forms are pure string work (``policy/pathforms.py``), so every decision runs in
this suite: the rule loader's normalisation, the decisions (``policy/decide.py``), and the
guard's own tables and resolution (``guard/files.py``, ``guard/paths.py``), each with the
``"windows"`` flavour passed in. What only Windows can do -- ``nt._getfinalpathname`` turning
8.3 short names, junctions and links into final names -- is applied by ``join_existing``,
whose own logic is tested here with a final-name function made of a plain table.

Each attack has its control: the same rules grant the honest spelling.
"""

from __future__ import annotations

import sys

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.guard import files
from pysandboxes.guard.kit import capture
from pysandboxes.guard.paths import REFUSED, make_path_tools
from pysandboxes.policy.decide import compile_policy
from pysandboxes.policy.loader import Loader
from pysandboxes.policy.model import Origin, PathRule, Policy
from pysandboxes.policy.pathforms import FORMS
from pysandboxes.runtime import RunContext

CWD = "C:\\work"
HOME = "C:\\Users\\me"
ORIGIN = Origin("C:\\work\\.py-sandboxes", 1)


def _rule(key: str, path: str) -> PathRule:
    return PathRule(key, path, ORIGIN, path)


POLICY = Policy(
    expose_ro=(_rule("expose-ro", "C:\\allowed"), _rule("expose-ro", "\\\\srv\\share\\docs")),
    expose_rw=(_rule("expose-rw", "C:\\allowed\\out"),),
    ignore=(_rule("ignore", ".env"), _rule("ignore", "C:\\allowed\\keys\\*.pem")),
)

# (written, expected access) -- the path as a program or a rule would write it.
CASES = [
    ("C:\\allowed\\notes.txt", "ro"),  # control
    ("C:\\ALLOWED\\Notes.TXT", "ro"),  # case ignored, as NTFS does
    ("c:/allowed/notes.txt", "ro"),  # "/" separates too
    ("C:\\allowed/sub\\\\x", "ro"),  # mixed and doubled separators
    ("allowed\\x", None),  # relative to C:\work: C:\work\allowed\x
    ("\\allowed\\x", "ro"),  # the root of the current drive
    ("C:\\allowed\\..\\secret.txt", None),  # ".." is undone lexically: C:\secret.txt
    ("C:\\allowed\\out\\..\\..\\secret.txt", None),
    ("C:\\allowedx\\f", None),  # a prefix of a name is not a parent
    ("C:\\allowed\\out\\f", "rw"),
    ("C:\\ALLOWED\\OUT\\f", "rw"),
    ("C:\\allowed\\.env", "ignored"),
    ("C:\\allowed\\.ENV", "ignored"),  # the same file on Windows
    ("C:\\allowed\\sub\\.Env\\f", "ignored"),
    ("C:\\allowed\\keys\\a.PEM", "ignored"),
    ("c:\\Allowed\\Keys\\sub\\a.pem", "ro"),  # * stays within one component...
    ("c:\\Allowed\\Keys\\a.pem\\inside", "ignored"),  # ...and hides what is below a match
    ("\\\\srv\\share\\docs\\a.txt", "ro"),  # a UNC share
    ("\\\\SRV\\Share\\Docs\\a.txt", "ro"),
    ("\\\\srv\\share\\other\\a.txt", None),
    ("\\\\srv\\share\\docs\\..\\other", None),  # ".." stops at the share
    ("D:\\allowed\\x", None),  # another drive
]

# Forms refused outright: each would let one text name another file than the rules see.
REFUSED_FORMS = [
    "\\\\?\\C:\\allowed\\..\\secret.txt",  # verbatim: no normalisation at all
    "//?/C:/allowed/x",
    "\\\\.\\C:\\allowed\\x",  # the device namespace
    "\\\\.\\PhysicalDrive0",
    "\\??\\C:\\allowed\\x",
    "C:\\allowed\\secret.txt::$DATA",  # the main stream of secret.txt
    "C:\\allowed\\notes.txt:hidden",  # an alternate data stream
    "C:\\allowed\\.env.",  # Windows drops the trailing dot: .env
    "C:\\allowed\\.env ",  # and the trailing space
    "C:\\allowed\\dir.\\x",
    "D:relative",  # relative to D:'s own current directory, unknown
    "\\\\srv",  # a UNC path without its share
    "C:\\a\0b",
]


@pytest.mark.parametrize(("written", "expected"), CASES)
def test_rules_and_guard_agree_on_windows_paths(written: str, expected: str | None) -> None:
    resolved = FORMS.absolute(written, CWD)
    assert compile_policy(POLICY, "windows").path(resolved) == expected
    table = files.build_table(POLICY, RunContext(), (), flavour="windows")
    code, _row = files.make_access(table)(resolved)
    assert {files.NONE: None, files.RO: "ro", files.RW: "rw", files.IGNORED: "ignored"}[
        code
    ] == expected


@pytest.mark.parametrize("written", REFUSED_FORMS)
def test_refused_forms(written: str) -> None:
    assert FORMS.problem(written) is not None or written.startswith("D:")
    with pytest.raises(ValueError):
        FORMS.absolute(written, CWD)
    # The guard: such a path resolves to a text no rule can match, and is refused.
    tools = make_path_tools(capture(), sys.prefix, flavour="windows")
    resolved = tools.resolve(written, CWD)
    assert resolved.startswith(REFUSED)
    table = files.build_table(POLICY, RunContext(), (), flavour="windows")
    assert files.make_access(table)(resolved)[0] == files.NONE


def test_drive_relative_on_the_current_drive_is_the_current_directory() -> None:
    assert FORMS.absolute("C:notes", CWD) == "C:\\work\\notes"
    assert FORMS.absolute("c:notes", CWD) == "C:\\work\\notes"


def test_normal_forms() -> None:
    assert FORMS.absolute("c:/a//b/./c/", CWD) == "C:\\a\\b\\c"
    assert FORMS.absolute("C:\\..\\..\\x", CWD) == "C:\\x"  # never above the drive
    assert FORMS.absolute("C:\\", CWD) == "C:\\"
    assert FORMS.absolute("\\\\srv\\share", CWD) == "\\\\srv\\share"
    assert FORMS.within("C:\\A\\b", "c:\\a") and FORMS.within("c:\\a", "C:\\A")
    assert not FORMS.within("C:\\ab", "C:\\a")
    assert FORMS.within("C:\\x", "C:\\")


def test_home_in_rules_and_not_in_accessed_paths() -> None:
    loader = Loader({"USERPROFILE": HOME}, CWD, flavour="windows")
    assert loader.absolute("~") == HOME
    assert loader.absolute("~/.config\\app") == "C:\\Users\\me\\.config\\app"
    assert loader.absolute("..\\x") == "C:\\x"
    with pytest.raises(ValueError):
        loader.absolute("~other\\x")  # no user database: refused, not guessed
    with pytest.raises(ValueError):
        loader.absolute("C:\\x\\f.txt:stream")
    # HOMEDRIVE and HOMEPATH without USERPROFILE (as ntpath.expanduser)
    other = Loader({"HOMEDRIVE": "D:", "HOMEPATH": "\\Users\\you"}, CWD, flavour="windows")
    assert other.absolute("~\\x") == "D:\\Users\\you\\x"
    # The guard never expands "~": it is an ordinary name in a path a program opens.
    tools = make_path_tools(capture(), sys.prefix, flavour="windows")
    assert tools.resolve("~\\x", CWD) == "C:\\work\\~\\x"


def test_final_names_replace_the_existing_part() -> None:
    """8.3 short names, junctions and links: the platform's final name of the longest prefix
    that exists (``nt._getfinalpathname`` there; a table here), the missing tail kept."""

    final = {
        "C:\\PROGRA~1": "\\\\?\\C:\\Program Files",
        "C:\\PROGRA~1\\app": "\\\\?\\C:\\Program Files\\app",
        "C:\\link": "\\\\?\\C:\\secret",  # a junction out of the exposed tree
        "C:\\": "C:\\",
        "\\\\srv\\share": "\\\\?\\UNC\\srv\\share",
    }

    def exists(path: str) -> bool:
        return path in final

    def name(path: str) -> str:
        return final[path]

    join = FORMS.join_existing
    assert join("C:\\PROGRA~1\\app\\new.txt", exists, name) == "C:\\Program Files\\app\\new.txt"
    assert join("C:\\link\\f", exists, name) == "C:\\secret\\f"
    assert join("C:\\missing\\f", exists, name) == "C:\\missing\\f"
    assert join("\\\\srv\\share\\f", exists, name) == "\\\\srv\\share\\f"
    policy = Policy(expose_ro=(_rule("expose-ro", "C:\\Program Files"),))
    decider = compile_policy(policy, "windows")
    assert decider.path(join("C:\\PROGRA~1\\app\\x", exists, name)) == "ro"
    assert decider.path(join("C:\\link\\f", exists, name)) is None


def test_windows_ignore_rules_refuse_names_windows_would_change() -> None:
    loader = Loader({}, CWD, flavour="windows")
    text = "ignore=.env.\nignore=notes.txt:hidden\nignore=*.PEM\nignore=C:\\k\\*.key\n"
    loader.read_main("C:\\work\\.py-sandboxes", text=text)
    with pytest.raises(ConfigError) as caught:
        loader.build(None)
    lines = sorted(problem.sort_key[1] for problem in caught.value.problems)
    assert lines == [1, 2]  # the trailing dot, the stream; the glob and the path are fine
    fine = Loader({}, CWD, flavour="windows")
    fine.read_main("C:\\work\\.py-sandboxes", text="ignore=*.PEM\nignore=C:\\k\\*.key\n")
    policy = fine.build(None)
    decider = compile_policy(policy, "windows")
    assert decider.path("C:\\work\\a.pem") == "ignored"
    assert decider.path("c:\\K\\x.KEY") == "ignored"
    assert decider.path("C:\\k\\sub\\x.key") is None


def test_descriptor_paths_not_known_are_not_guessed() -> None:
    """``fd_query=""`` (no ``/proc``, no ``F_GETPATH``): no path is given for any descriptor,
    and ``fd_known`` says so (the guard then refuses a ``dir_fd``-relative path)."""

    kit = capture()
    unknown = make_path_tools(kit, sys.prefix, fd_query="")
    known = make_path_tools(kit, sys.prefix, fd_query="proc")
    with open(__file__, "rb") as handle:
        assert known.fd_known and known.fd_path(handle.fileno()) == __file__
        assert not unknown.fd_known and unknown.fd_path(handle.fileno()) is None
