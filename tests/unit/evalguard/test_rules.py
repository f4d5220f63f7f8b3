"""The eval-* rules: profiles, DENY lines, grants no rule may give, every violation at once."""

from __future__ import annotations

import pytest

from pysandboxes import sandbox_denials
from pysandboxes.errors import (
    ConfigError,
    EvalAttributeDenied,
    EvalOutputError,
    EvalSyntaxRejected,
    EvalTimeout,
)
from pysandboxes.evalguard.api import guarded_eval
from pysandboxes.policy import load_policy


def test_every_violation_is_listed_with_its_rule_line() -> None:
    source = "while x:\n    y = [i for i in range(3)]\nlen(y).bit_length()\nimport json"
    with pytest.raises(EvalSyntaxRejected) as info:
        guarded_eval(source, mode="exec", rules=["eval-syntax=arith"])
    suggestions = {d.suggestion for d in sandbox_denials(info.value)}
    assert {
        "eval-syntax=loop",
        "eval-syntax=assign",
        "eval-syntax=comprehension",
        "eval-syntax=import",
        "eval-call=range",
        "eval-call=len",
        "eval-attribute=bit_length",
        "eval-import=json",
    } <= suggestions
    assert isinstance(info.value, SyntaxError)
    for suggestion in suggestions:
        assert suggestion in str(info.value)


def test_named_profile_lines_and_suggestions() -> None:
    rules = ["eval-syntax:calc=arith", "eval-call:calc=abs", "eval-syntax=compare"]
    assert guarded_eval("abs(-2) * 3", profile="calc", rules=rules) == 6
    with pytest.raises(EvalSyntaxRejected) as info:
        guarded_eval("round(1.5)", profile="calc", rules=rules)
    assert sandbox_denials(info.value)[0].suggestion == "eval-call:calc=round"
    # the default profile does not see the calc lines
    with pytest.raises(EvalSyntaxRejected):
        guarded_eval("abs(-2) * 3", rules=rules)


def test_unknown_profile_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="nope"):
        guarded_eval("1", profile="nope", rules=["eval-syntax=arith"])


def test_deny_wins_over_allow() -> None:
    rules = ["eval-call=len,abs", "eval-call=DENY:len", "eval-attribute=str-methods,DENY:upper"]
    assert guarded_eval("abs(-1)", rules=rules) == 1
    with pytest.raises(EvalSyntaxRejected) as info:
        guarded_eval("len('a')", rules=rules)
    assert "DENY:len" in str(info.value)
    with pytest.raises(EvalSyntaxRejected):
        guarded_eval("'a'.upper()", rules=rules)
    assert guarded_eval("'a'.lower()", rules=rules) == "a"


@pytest.mark.parametrize(
    "line",
    [
        "eval-call=open",
        "eval-call=eval",
        "eval-import=os",
        "eval-import=operator",
        "eval-magic=__class__",
        "eval-magic=__globals__",
        "eval-syntax=MatchClass",
        "eval-call=os.system",
    ],
)
def test_grants_no_rule_may_give(line: str) -> None:
    with pytest.raises(ConfigError, match="cannot be granted"):
        guarded_eval("1", rules=[line])


def test_unguarded_dynamic_code_with_eval_rules_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="cannot be combined"):
        load_policy(None, cli_rules=[("python-api", "ALLOW:dynamic-code"), ("eval-call", "len")])


def test_rules_must_be_rule_lines() -> None:
    with pytest.raises(ConfigError, match="not a key=value line"):
        guarded_eval("1", rules=["eval-syntax=arith", "python-import"])
    with pytest.raises(ConfigError, match="unknown"):  # other lines are the worker's: checked
        guarded_eval("1", rules=["eval-syntax=arith", "python-nope=os"])
    with pytest.raises(ConfigError, match="no eval"):
        guarded_eval("1")


def test_bad_values_are_reported_by_the_loader() -> None:
    with pytest.raises(ConfigError, match="eval-timeout"):
        guarded_eval("1", rules=["eval-timeout=forever"])
    with pytest.raises(ConfigError, match="eval-syntax"):
        guarded_eval("1", rules=["eval-syntax=loops"])


def test_budgets_from_the_rules() -> None:
    with pytest.raises(EvalTimeout, match="eval-max-iterations"):
        guarded_eval("sum(range(10**6))", rules=["eval-call=sum,range", "eval-max-iterations=1K"])
    with pytest.raises(EvalOutputError, match="eval-max-output"):
        guarded_eval("print('x' * 100)", rules=["eval-call=print", "eval-max-output=10"])
    with pytest.raises(EvalSyntaxRejected, match="eval-max-nodes"):
        guarded_eval("1 + 1 + 1 + 1", rules=["eval-max-nodes=5"])


def test_names_that_could_shadow_the_guard_are_refused() -> None:
    with pytest.raises(ValueError, match="reserved"):
        guarded_eval("x", names={"_sb_ga": 1, "x": 1}, rules=["eval-syntax=arith"])
    with pytest.raises(ValueError, match="reserved"):
        guarded_eval("x", names={"__builtins__": {}, "x": 1}, rules=["eval-syntax=arith"])
    with pytest.raises(TypeError, match="cannot cross"):
        guarded_eval("x", names={"x": object()}, rules=["eval-syntax=arith"])


def test_attribute_judged_by_type_not_name() -> None:
    rules = ["eval-attribute=list-methods", "eval-syntax=arith"]
    assert guarded_eval("xs.count(1)", names={"xs": [1, 1]}, rules=rules) == 2
    # 'count' is a list method: on a str it is not granted by list-methods
    with pytest.raises(EvalAttributeDenied) as info:
        guarded_eval("s.count('a')", names={"s": "aa"}, rules=rules)
    assert sandbox_denials(info.value)[0].suggestion == "eval-attribute=count"


def test_refused_source_is_cached_and_raised_again() -> None:
    rules = ["eval-syntax=arith"]
    for _ in range(2):
        with pytest.raises(EvalSyntaxRejected):
            guarded_eval("x if y else z", rules=rules)


def test_plain_syntax_error_is_a_syntax_error() -> None:
    with pytest.raises(SyntaxError) as info:
        guarded_eval("1 +", rules=["eval-syntax=arith"])
    assert not isinstance(info.value, EvalSyntaxRejected)


def test_results_of_evaluated_functions_do_not_cross() -> None:
    from pysandboxes.errors import RuleEvalError

    with pytest.raises(RuleEvalError, match="cannot be returned"):
        guarded_eval("lambda: 1", rules=["eval-syntax=func"])


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="unknown backend"):
        guarded_eval("1", rules=["eval-syntax=arith"], backend="nope")


def test_choosing_a_backend_once_does_not_change_the_default() -> None:
    from pysandboxes.evalguard import api
    from pysandboxes.evalguard.worker import WORKER

    guarded_eval("1", rules=["eval-syntax=arith"], backend="fork")
    guarded_eval("1", rules=["eval-syntax=arith"], backend="in-process")
    assert api.default_backend() is WORKER  # hard bounds by default
