"""SPEC §3.7: the exception family, ConfigError's problem list, sandbox_denials."""

from __future__ import annotations

import errno
import pickle

import pytest

from pysandboxes import errors
from pysandboxes.errors import (
    ConfigError,
    ConfigProblem,
    Denial,
    EvalSyntaxRejected,
    EvalTimeout,
    ProviderUnavailableError,
    RuleApiPermissionError,
    RuleConnectionRefusedError,
    RuleEvalError,
    RuleFileNotFoundError,
    RuleImportError,
    RuleModuleNotFoundError,
    RulePermissionError,
    SandBoxError,
    sandbox_denials,
)

DENIAL = Denial("net", "10.0.0.1:80", "net=DENY|*|10.0.0.0/8|*|OUT", "p(1)", None)


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (RulePermissionError, PermissionError),
        (RuleApiPermissionError, PermissionError),
        (RuleFileNotFoundError, FileNotFoundError),
        (RuleConnectionRefusedError, ConnectionRefusedError),
        (RuleModuleNotFoundError, ModuleNotFoundError),
        (RuleImportError, ImportError),
        (EvalSyntaxRejected, SyntaxError),
        (EvalTimeout, TimeoutError),
        (ConfigError, ValueError),
        (ProviderUnavailableError, ConfigError),
    ],
)
def test_each_refusal_is_a_sandbox_error_and_its_builtin(cls: type, builtin: type) -> None:
    assert issubclass(cls, SandBoxError) and issubclass(cls, builtin)


def test_os_errors_carry_errno_and_a_clean_message() -> None:
    exc = RulePermissionError("open of /etc/x refused", filename="/etc/x", denial=DENIAL)
    assert exc.errno == errno.EACCES and exc.filename == "/etc/x"
    assert str(exc) == "open of /etc/x refused"
    assert exc.denial is DENIAL
    assert RuleFileNotFoundError("gone").errno == errno.ENOENT
    assert RuleConnectionRefusedError("no").errno == errno.ECONNREFUSED
    assert str(RuleConnectionRefusedError("Connection to [1.2.3.4]:80 DENIED")) == (
        "Connection to [1.2.3.4]:80 DENIED"
    )


def test_import_refusal_message_and_fallback() -> None:
    exc = RuleModuleNotFoundError("Module named 'socket' is not allowed by a rule", name="socket")
    assert exc.name == "socket"
    try:
        raise exc
    except ImportError as caught:  # plain-Python fallbacks keep working
        assert str(caught) == "Module named 'socket' is not allowed by a rule"
    assert issubclass(RuleEvalError, SandBoxError)


def test_config_error_sorts_problems_and_prints_one_per_line() -> None:
    problems = [
        ConfigProblem("b(2)", "two", ("/b", 2)),
        ConfigProblem("<arg>", "arg", ("\uffff<arg>", 1)),
        ConfigProblem("a(9)", "nine", ("/a", 9)),
        ConfigProblem("a(10)", "ten", ("/a", 10)),
    ]
    exc = ConfigError(problems)
    assert [p.where for p in exc.problems] == ["a(9)", "a(10)", "b(2)", "<arg>"]
    assert str(exc) == "a(9): nine\na(10): ten\nb(2): two\n<arg>: arg"
    single = ConfigError("provider qemu cannot start")
    assert [str(p) for p in single.problems] == ["<config>: provider qemu cannot start"]


def test_sandbox_denials_walks_causes_contexts_and_groups() -> None:
    other = Denial("import", "socket")
    inner = RuleModuleNotFoundError("m", denial=other)
    try:
        try:
            raise inner
        except ImportError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as outer:
        assert sandbox_denials(outer) == [other]
    group = ExceptionGroup("g", [RulePermissionError("x", denial=DENIAL), ValueError("plain")])
    assert sandbox_denials(group) == [DENIAL]
    assert sandbox_denials(None) == [] and sandbox_denials(ValueError()) == []
    violations = [Denial("eval", "Attribute"), Denial("eval", "Call")]
    assert sandbox_denials(EvalSyntaxRejected("bad", violations=violations)) == violations


def test_denial_to_dict() -> None:
    assert DENIAL.to_dict() == {
        "kind": "net",
        "target": "10.0.0.1:80",
        "rule": "net=DENY|*|10.0.0.0/8|*|OUT",
        "origin": "p(1)",
        "suggestion": None,
        "detail": None,
    }


def test_config_error_survives_pickling_for_partial_mode() -> None:
    exc = ConfigError([ConfigProblem("a(1)", "bad", ("/a", 1))])
    copy = pickle.loads(pickle.dumps(exc))
    assert isinstance(copy, ConfigError) and str(copy) == "a(1): bad"
    assert [str(p) for p in copy.problems] == ["a(1): bad"]


@pytest.mark.parametrize(
    "exc",
    [
        RulePermissionError("open of /x refused", filename="/x", denial=DENIAL),
        RulePermissionError("refused"),
        RuleFileNotFoundError("hidden", filename="/f", denial=DENIAL),
        RuleConnectionRefusedError("Connection DENIED", denial=DENIAL),
        RuleApiPermissionError("os.system refused", denial=DENIAL),
        RuleImportError("i", name="n", denial=DENIAL),
        RuleModuleNotFoundError("Module named 'socket' is not allowed", name="socket"),
        EvalSyntaxRejected("rejected", violations=[DENIAL]),
        EvalTimeout("timeout"),
        ProviderUnavailableError("qemu cannot start: install qemu-system-x86"),
    ],
)
def test_every_error_pickles_with_class_message_and_denial(exc: BaseException) -> None:
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is type(exc) and str(copy) == str(exc)
    assert sandbox_denials(copy) == sandbox_denials(exc)
    for attr in ("errno", "filename", "name"):
        assert getattr(copy, attr, None) == getattr(exc, attr, None)


def test_all_is_complete() -> None:
    for name in errors.__all__:
        assert hasattr(errors, name)


def test_records_are_frozen_values() -> None:
    from pysandboxes.policy.model import NetRule, Origin

    origin = Origin("/p/.py-sandboxes", 4)
    assert origin == Origin("/p/.py-sandboxes", 4, False) and origin != Origin("/p/x", 4)
    assert hash(origin) == hash(Origin("/p/.py-sandboxes", 4))
    assert origin != ("/p/.py-sandboxes", 4, False)
    with pytest.raises(AttributeError, match="frozen"):
        origin.line = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del origin.file
    assert repr(origin) == "Origin(file='/p/.py-sandboxes', line=4, learned=False)"
    assert origin.replace(line=7) == Origin("/p/.py-sandboxes", 7)
    rule = NetRule("DENY", "*", "10.0.0.0/8", None, "OUT", origin, "net=DENY|*|10.0.0.0/8|*|OUT")
    assert pickle.loads(pickle.dumps(rule)) == rule
    assert rule.to_dict()["origin"] is origin
    assert Denial("file", "/x", detail="d") == Denial("file", "/x", None, None, None, "d")
    problem = ConfigProblem("a(1)", "m", ("/a", 1))
    assert problem == ConfigProblem("a(1)", "m")  # the sort key takes no part in equality
    assert pickle.loads(pickle.dumps(problem)).sort_key == ("/a", 1)
