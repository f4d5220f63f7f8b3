"""The audit hook's compiled accelerator (src/pysandboxes/guard/accelerator.py, _accelerator.c).

- it is built for the interpreter under test (a failure in CI, PYSANDBOXES_REQUIRE_ALL=1: the
  set-up's ``pip install -e`` builds it);
- its functions answer what their pure-Python counterparts answer, on real stacks, in a fresh
  interpreter each (the module hands its functions out once per process);
- it is handed out once: a second ``take``, or one after importing the module again, raises;
  nothing is left in ``sys.modules`` or in the package;
- in a python-sb run, the program cannot take it, and none of its functions is reachable from
  what the program can walk without an audit event (modules, closures, defaults, owners);
- ``PYSANDBOXES_ACCELERATOR``: ``off`` and ``require`` run, a bad value stops before the
  program with a message saying what is expected, ``--explain`` says which hook a run uses.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import REPO, base_env, require, run_sb

BUILT = importlib.util.find_spec("pysandboxes.guard._accelerator") is not None


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter of the test environment (one hand-out per process)."""

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        check=False,
    )


def test_built_for_this_interpreter() -> None:
    require(
        BUILT,
        "the compiled accelerator is not built for this interpreter "
        "(pip install -e . with a C compiler and Python's headers)",
    )


AGREEMENT = """
    import sys
    from pysandboxes.guard import accelerator
    from pysandboxes.guard.kit import capture

    kit = capture()
    compiled = accelerator.take("require", kit)
    pure = accelerator._pure(kit)
    assert compiled.compiled and not pure.compiled
    frame_type = type(sys._getframe())

    def deep(n, check):
        if n:
            return deep(n - 1, check)
        return check()

    def check():
        answers = []
        for depth in range(12):
            try:
                a = compiled.frame_at(depth)
            except ValueError:
                a = "too deep"
            try:
                b = pure.frame_at(depth)
            except ValueError:
                b = "too deep"
            answers.append((depth, a is b or a == b))
            if type(a) is frame_type:
                assert compiled.code_of(a) is pure.code_of(a) is a.f_code
        here = sys._getframe()
        mine = frozenset({kit.identity(globals())})
        other = frozenset({kit.identity({})})
        for frame in (here, here.f_back, None, "not a frame", 3):
            for scopes in (mine, other, frozenset()):
                assert compiled.in_chain(frame, scopes) == pure.in_chain(frame, scopes), (
                    frame, scopes)
        assert compiled.in_chain(here, mine) and not compiled.in_chain(here, other)
        return answers

    for n in (0, 3, 40):
        answers = deep(n, check)
        assert all(same for _, same in answers), answers
    for bad in ("x", None, object()):
        try:
            compiled.code_of(bad)
        except TypeError:
            pass
        else:
            raise AssertionError("code_of of a non-frame")
    try:
        compiled.in_chain(sys._getframe(), {1})  # a set, not a frozenset
    except TypeError:
        pass
    else:
        raise AssertionError("in_chain of a set")
    print("agree")
"""


def test_compiled_and_pure_agree() -> None:
    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(AGREEMENT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "agree"


WALKS = """
    import contextlib, importlib, json, os, sys, tempfile
    from pysandboxes.guard import accelerator
    from pysandboxes.guard.frames import CODE_DEPUTIES, IMPORT_DEPUTIES, NAME_DEPUTIES, make_frames
    from pysandboxes.guard.kit import capture

    kit = capture()
    compiled = accelerator.take("require", kit)
    pure = accelerator._pure(kit)
    assert compiled.walk is not None and pure.walk is None
    stdlib = os.path.dirname(os.__file__)
    package = os.path.dirname(os.path.dirname(accelerator.__file__))
    here = tempfile.mkdtemp()
    # A function that runs as guard code (guard globals, a file of the guard's): the walks skip
    # its frame, as they skip the handlers', and look at whoever called it.
    probe_scope = {"__builtins__": __builtins__}
    guard_globals = frozenset(
        kit.identity(m.__dict__)
        for n, m in sys.modules.items()
        if n.startswith("pysandboxes.guard") and m is not None
    ) | {kit.identity(probe_scope)}
    both = [
        make_frames(kit, acc, (stdlib,), (stdlib,), guard_globals, {}, (here,), package)
        for acc in (compiled, pure)
    ]
    answers = []
    # The asking function runs as guard code (guard globals, a file of the guard's), as the
    # handlers do: the walks skip its frame and look at whoever called it.
    ASK = (
        "def probe(label):\\n"
        "    for deputies in (CODE_DEPUTIES, IMPORT_DEPUTIES, NAME_DEPUTIES, ()):\\n"
        "        for count in (0, 1, 2, 3, 50):\\n"
        "            for enough in (lambda first: False, lambda first: len(first) > 1):\\n"
        "                got = [f.survey(count, deputies, enough) for f in both]\\n"
        "                answers.append((label, 'survey', got[0] == got[1], repr(got)))\\n"
        "        for name in ('caller_file', 'statement_importer', 'caller_is_program'):\\n"
        "            got = [getattr(f, name)(deputies) for f in both]\\n"
        "            answers.append((label, name, got[0] == got[1], repr(got)))\\n"
    )
    probe_scope.update(
        both=both,
        answers=answers,
        CODE_DEPUTIES=CODE_DEPUTIES,
        IMPORT_DEPUTIES=IMPORT_DEPUTIES,
        NAME_DEPUTIES=NAME_DEPUTIES,
    )
    exec(compile(ASK, package + "/guard/probe.py", "exec"), probe_scope)
    probe = probe_scope["probe"]

    def deep(n, label):
        return probe(label) if n == 0 else deep(n - 1, label)

    probe("direct")
    deep(30, "deep")
    with contextlib.ExitStack() as stack:  # a callback dispatcher: a code deputy
        stack.callback(probe, "contextlib")
    module = os.path.join(here, "walked_module.py")
    with open(module, "w") as handle:
        handle.write("import sys\\nsys.modules['__probe__']('import_module')\\n")
    sys.path.insert(0, here)
    sys.modules["__probe__"] = probe
    importlib.import_module("walked_module")  # the import system's frames: deputies
    sys.modules.pop("walked_module")
    __import__("walked_module")
    exec("probe('exec')", {"probe": probe})  # source text run by the program
    # Called by the import system itself, through importlib/__init__.py and pkgutil (a name
    # deputy): a path hook of the guard's, for a directory new to the path.
    other = tempfile.mkdtemp()
    probe_scope["OTHER"] = other
    exec(compile(
        "def hook(path):\\n    if path == OTHER:\\n        probe('path_hook')\\n"
        "    raise ImportError\\n", package + "/guard/probe.py", "exec"), probe_scope)
    sys.path.insert(0, other)
    sys.path_hooks.insert(0, probe_scope["hook"])
    import pkgutil
    try:
        pkgutil.resolve_name("not_there_at_all")
    except ImportError:
        pass
    sys.path_hooks.pop(0)
    sys.path.remove(other)

    class Odd(str):
        pass

    odd = compile("def odd(label):\\n    probe(label)\\n", "odd.py", "exec")
    odd = odd.replace(co_consts=tuple(
        c.replace(co_filename=Odd("odd.py")) if hasattr(c, "co_filename") else c
        for c in odd.co_consts
    ))
    scope = {"probe": probe}
    exec(odd, scope)
    scope["odd"]("co_filename not a str")
    bad = [a for a in answers if not a[2]]
    files = sorted({os.path.basename(eval(a[3])[0] or "None") for a in answers
                    if a[1] == "caller_file"})
    print(json.dumps({"checked": len(answers), "labels": sorted({a[0] for a in answers}),
                      "differ": bad[:5], "callers": files}))
"""


def test_compiled_walk_and_python_walk_agree() -> None:
    """The compiled walk (``frames.walk`` in C) gives the Python walk's answers, through every
    function built on it, from stacks with deputies (the import system, ``contextlib``), guard
    frames, source run by ``exec``, a deep stack and a code object whose file name is not a
    ``str``, for each deputy list, count and stopping rule."""

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(WALKS)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["differ"] == []
    labels = ["direct", "deep", "contextlib", "import_module", "exec", "path_hook"]
    assert data["labels"] == sorted([*labels, "co_filename not a str"])
    assert data["checked"] == 8 * 4 * (5 * 2 + 3)  # import_module and __import__: two asks
    # The callers found differ with the deputy lists (the cases reach the deputy rules):
    # contextlib.py is the callback's caller with no list, the program (run by -c) with the
    # code deputies; the import system's frame calls the path hook.
    assert {
        "<co_filename that is not a str>",
        "<frozen importlib._bootstrap_external>",
        "<string>",
        "contextlib.py",
        "walked_module.py",
    } <= set(data["callers"]), data


GATE = """
    from pysandboxes.guard import accelerator
    from pysandboxes.guard.kit import capture

    gate_of = accelerator.take("require", capture()).make_gate
    calls = []

    def body(event, args):
        calls.append((event, args))
        return "body"

    pending, graveyard = [], []
    gate = gate_of(frozenset({"handled"}), body, pending, graveyard)
    results = {}
    results["unhandled"] = gate("unhandled", (1,))
    results["handled"] = gate("handled", (2,))
    pending.append("a signal")
    results["unhandled, a signal queued"] = gate("unhandled", (3,))
    pending.clear()
    graveyard.append("released")
    results["unhandled, graveyard"] = gate("unhandled", (4,))
    graveyard.clear()

    class Name(str):
        pass

    results["a str subclass"] = gate(Name("unhandled"), (5,))
    for bad in ((set(), body, [], []), (frozenset(), body, (), []), (frozenset(), 1, [], [])):
        try:
            gate_of(*bad)
        except TypeError:
            pass
        else:
            raise AssertionError(bad)
    print(repr((results, [c[1] for c in calls])))
"""


def test_gate_answers_only_what_the_body_would_return_at_once() -> None:
    """The gate returns by itself only for an exact ``str`` event no handler takes, with no
    signal queued and nothing in the graveyard: what the hook's body does then (it returns
    at once). Everything else reaches the body."""

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(GATE)
    assert result.returncode == 0, result.stderr
    results, reached = eval(result.stdout)  # a repr of plain data printed by GATE
    assert results == {
        "unhandled": None,
        "handled": "body",
        "unhandled, a signal queued": "body",
        "unhandled, graveyard": "body",
        "a str subclass": "body",
    }
    assert reached == [(2,), (3,), (4,), (5,)]


ONCE = """
    import importlib, sys
    from pysandboxes.guard import accelerator
    from pysandboxes.guard.kit import capture

    taken = accelerator.take("auto", capture())
    assert taken.compiled
    assert accelerator.MODULE not in sys.modules
    assert not hasattr(sys.modules["pysandboxes.guard"], "_accelerator")
    again = importlib.import_module(accelerator.MODULE)
    assert [n for n in dir(again) if not n.startswith("__")] == ["compile_program", "take"]
    try:
        again.take()
    except RuntimeError as exc:
        print("refused:", exc)
    try:
        accelerator.take("off", capture())
    except RuntimeError:
        print("the guard's second take refused too")
"""


def test_handed_out_once() -> None:
    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(ONCE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "refused: python-sb: the accelerator was already handed out in this process",
        "the guard's second take refused too",
    ]


def test_off_uses_pure_python_and_still_takes_it() -> None:
    """``off``: the pure functions, and the compiled module taken all the same (so that the
    program cannot take it afterwards)."""

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(
        """
        import importlib
        from pysandboxes.guard import accelerator
        from pysandboxes.guard.kit import capture

        taken = accelerator.take("off", capture())
        print(taken.compiled, taken.make_gate)
        try:
            importlib.import_module(accelerator.MODULE).take()
        except RuntimeError:
            print("taken")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "None", "taken"]


# A walk of everything a program reaches without an audit event (the walk of
# tests/redteam/misuse/attacks/files_kit_from_exposed_closure.py, extended to class members):
# modules' namespaces, closures, defaults, bound owners, wrapped functions.
REACH = """
import sys
import types

NAMES = {"code_of", "frame_at", "in_chain", "make_gate", "gate"}
seen, found = set(), []
seen.update((id(seen), id(found)))


def walk(obj, depth):
    if depth > 9 or id(obj) in seen:
        return
    seen.add(id(obj))
    if type(obj) is types.BuiltinFunctionType and getattr(obj, "__name__", "") in NAMES:
        found.append(obj.__name__)
        return
    if type(obj) is types.FunctionType:
        for cell in obj.__closure__ or ():
            try:
                walk(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                pass
    for attr in ("__self__", "__func__", "__wrapped__", "__defaults__", "__kwdefaults__"):
        try:
            walk(getattr(obj, attr, None), depth + 1)
        except Exception:
            pass
    if isinstance(obj, (tuple, list, frozenset, set)):
        for item in list(obj):
            walk(item, depth + 1)
    elif isinstance(obj, dict):
        for item in list(obj.values()):
            walk(item, depth + 1)
    elif isinstance(obj, (types.ModuleType, type)):
        for item in list(vars(obj).values()):
            walk(item, depth + 1)


for module in list(sys.modules.values()):
    walk(module, 0)
import builtins
walk(vars(builtins), 0)
print("found:", sorted(set(found)), "objects:", len(seen))
try:
    import pysandboxes.guard._accelerator as again
    again.take()
except BaseException as exc:
    print("take:", type(exc).__name__)
else:
    print("take: handed out")
"""


def _project(tmp_path: Path, name: str, program: str, rules: str, choice: str) -> dict[str, str]:
    """``program`` as ``name`` beside a rule file of ``rules`` (``os-sandbox=subprocess``
    first); the environment of a run with ``PYSANDBOXES_ACCELERATOR=choice``."""

    (tmp_path / name).write_text(program)
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\n" + rules)
    home = tmp_path / "home"
    home.mkdir()
    return base_env(home, {"PYSANDBOXES_ACCELERATOR": choice})


@pytest.mark.parametrize("choice", ["auto", "off"])
def test_program_cannot_reach_it(tmp_path: Path, choice: str) -> None:
    require(BUILT, "the compiled accelerator is not built for this interpreter")
    env = _project(tmp_path, "reach.py", REACH, "expose-ro=.\npython-import=*\n", choice)
    result = run_sb(["reach.py"], cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("found: [] objects: "), result.stdout
    assert int(lines[0].rsplit(" ", 1)[1]) > 1000  # the walk did reach the guard's wrappers
    assert lines[1] == "take: RuntimeError"


HELLO = "import sys\nprint('hello', sys.version_info[0])\n"


@pytest.mark.parametrize("choice", ["off", "require", "AUTO", ""])
def test_choices_run(tmp_path: Path, choice: str) -> None:
    if choice == "require":
        require(BUILT, "the compiled accelerator is not built for this interpreter")
    env = _project(tmp_path, "hello.py", HELLO, "expose-ro=.\n", choice)
    result = run_sb(["hello.py"], cwd=tmp_path, env=env)
    assert (result.returncode, result.stdout) == (0, "hello 3\n"), result.stderr


def test_bad_choice_stops_before_the_program(tmp_path: Path) -> None:
    program = "open('ran', 'w').close()\n"
    env = _project(tmp_path, "hello.py", program, "expose-rw=.\n", "fast")
    result = run_sb(["hello.py"], cwd=tmp_path, env=env)
    assert result.returncode != 0
    assert "PYSANDBOXES_ACCELERATOR='fast': expected one of auto, off, require" in result.stderr
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("choice", "compiled"), [("auto", True), ("off", False), ("require", True)]
)
def test_explain_says_which_hook(tmp_path: Path, choice: str, compiled: bool) -> None:
    require(BUILT, "the compiled accelerator is not built for this interpreter")
    env = _project(tmp_path, "hello.py", HELLO, "expose-ro=.\n", choice)
    text = run_sb(["--explain", "hello.py"], cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    expected = "with its compiled accelerator" if compiled else "in pure Python"
    line = f"python layer: the audit hook {expected} (PYSANDBOXES_ACCELERATOR={choice})"
    assert line in text.stdout.splitlines()
    data = run_sb(["--explain", "--json", "hello.py"], cwd=tmp_path, env=env)
    assert data.returncode == 0, data.stderr
    accelerator = json.loads(data.stdout)["accelerator"]
    assert (accelerator["choice"], accelerator["compiled"], accelerator["built"]) == (
        choice,
        compiled,
        True,
    )


COMPILE_SAME = r"""
    import sys
    from pysandboxes.guard import _accelerator

    events = []
    sys.addaudithook(lambda event, args: events.append(args) if event == "compile" else None)
    fast = _accelerator.compile_program
    sources = [
        b"x = 1\nprint(x)\n",
        "y = 'd\u00e9j\u00e0'\n",
        b"# -*- coding: latin-1 -*-\nz = '\xe9'\n",
        "# -*- coding: latin-1 -*-\nz = '\u00e9'\n",  # a str's cookie is ignored, as compile does
        b"\xef\xbb\xbfw = 2\n",
        b"from __future__ import annotations\ndef f(a: int) -> q: return a\n",
        b"assert False, 'kept or stripped as the interpreter is optimized'\n",
    ]
    for source in sources:
        del events[:]
        code = fast(source, "/tmp/p.py")
        fast_events = list(events)
        del events[:]
        slow = compile(source, "/tmp/p.py", "exec", dont_inherit=True)
        assert fast_events == events, (fast_events, events)
        assert code.co_code == slow.co_code and code.co_consts == slow.co_consts, source
        assert code.co_filename == "/tmp/p.py" and code.co_flags == slow.co_flags, source
    for bad in (b"def f(:\n", "x = (\n", b"# coding: nope\n", b"\xff = 1\n", "\tif 1:\n  x\n"):
        errors = []
        for compiler in (fast, lambda s, f: compile(s, f, "exec", dont_inherit=True)):
            try:
                compiler(bad, "<p>")
            except (SyntaxError, ValueError) as exc:
                errors.append((type(exc), str(exc)))
        assert len(errors) == 2 and errors[0] == errors[1], (bad, errors)
    assert fast(b"a\x00b", "<p>") is None and fast("a\x00b", "<p>") is None  # compile reports it
    for wrong in ((1, "<p>"), (b"", 1), (b"",)):
        try:
            fast(*wrong)
        except TypeError:
            pass
        else:
            raise AssertionError(wrong)
    print("same")
"""


def test_compile_program_is_builtin_compile_of_source() -> None:
    """The accelerator's compile of the program's code (launch/child.py ``program_compiler``)
    gives builtin compile's code and errors, and the same ``compile`` audit event, which
    CPython's parser raises: in a program's hands it is builtin compile without ast input."""

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    result = _fresh(COMPILE_SAME)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["same"]


TABLE_SAME = r"""
    import os, sys
    from pysandboxes.guard import accelerator, files, hook, paths
    from pysandboxes.guard.kit import capture
    from pysandboxes.policy import parse_text
    from pysandboxes.runtime import RunContext

    root = sys.argv[1]
    os.makedirs(root + "/real/sub")
    os.symlink("real", root + "/link")
    os.symlink(root + "/link/sub", root + "/abs")
    os.symlink("loop", root + "/loop")
    open(root + "/real/.py-sandboxes", "w").write("expose-ro=.\n")
    policy = parse_text(
        "expose-ro=.\ninclude \"missing.py-sandboxes\"\n", root + "/link/.py-sandboxes", cwd=root
    )
    context = RunContext(tmpdir=root + "/abs", denials_file=root + "/loop/d.txt")
    kit = capture()
    taken = accelerator.take("auto", kit)
    assert taken.compiled
    tools = paths.make_path_tools(
        kit, os.path.dirname(os.__file__), dir_path=taken.dir_path, compiled_walk=taken.path_walk
    )
    roots = (root + "/link", root + "/abs/x/..", root + "/loop", root + "/gone/x", sys.prefix)
    plain = files.build_table(policy, context, roots)
    walked = files.build_table(policy, context, roots, realpath=hook._table_realpath(tools))
    for field in ("rows", "protected", "trusted", "own_roots"):
        assert getattr(plain, field) == getattr(walked, field), field
    assert root + "/real" in {row.path for row in walked.rows}
    print("same")
"""


def test_path_table_by_the_compiled_walk_is_realpaths(tmp_path: Path) -> None:
    """The hook resolves the path table's defaults and protected files as it resolves the
    program's paths (``hook._table_realpath``, the compiled walk here): the table is the one
    ``os.path.realpath`` gives, links, a loop and missing components included."""

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    code = textwrap.dedent(TABLE_SAME)
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["same"]
