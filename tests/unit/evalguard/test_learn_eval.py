"""--learn writes the eval-* lines a run needed, and the learned file replays without a refusal."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import base_env, run_sb

PROGRAM = """\
data = [3, 1, 2]
print(eval("sorted(x * 2 for x in data)", {"data": data}))
ns = {}
exec("import math\\ntotal = 0\\nfor i in range(10):\\n    total += math.sqrt(i)\\n"
     "r = f'{total:.2f}'.upper()", ns)
print(ns["r"])
"""


def guard_instead(text: str) -> str:
    """What a reviewer does to guard the evaluations: the unguarded grant out, the suggested
    eval-* lines (commented out, ``# eval-key=value``) in."""

    out = []
    for line in text.splitlines():
        if line == "python-api=ALLOW:builtins.compile  # dynamic-code":
            continue
        key = line[2:].split("=", 1)[0]
        if line.startswith("# eval-") and "=" in line and " " not in key:
            line = line[2:]
        out.append(line)
    return "\n".join(out) + "\n"


def test_learned_eval_lines_replay(project: Path, home: Path) -> None:
    (project / "p.py").write_text(PROGRAM)
    env = base_env(home)
    learned = run_sb(["--learn", "p.py"], cwd=project, env=env)
    assert learned.returncode == 0, learned.stderr
    text = (project / ".py-sandboxes").read_text()
    # learned as it ran (unguarded), with the guarding lines offered for review
    assert "python-api=ALLOW:builtins.compile  # dynamic-code" in text.splitlines()
    suggested = [line[2:] for line in text.splitlines() if line.startswith("# eval-")]
    assert "eval-syntax=arith, assign, comprehension, fstring, import, loop" in suggested
    assert "eval-call=range, sorted" in suggested
    assert "eval-import=math" in suggested
    assert "eval-namespace=adaptive" in suggested
    replay = run_sb(["p.py"], cwd=project, env=env)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.split() == ["[2,", "4,", "6]", "19.31"]
    # the reviewer's choice: guard it (the suggested lines in, the unguarded grant out)
    (project / ".py-sandboxes").write_text(guard_instead(text))
    replay = run_sb(["p.py"], cwd=project, env=env)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.split() == ["[2,", "4,", "6]", "19.31"]
    # and the replay is guarded: a source beyond the learned lines is refused
    (project / "q.py").write_text("print(eval('().__class__'))\n")
    refused = run_sb(["q.py"], cwd=project, env=env)
    assert refused.returncode == 1 and "EvalSyntaxRejected" in refused.stderr


CALLER_PROGRAM = """\
import collections
Point = collections.namedtuple("Point", "x y")  # a library's own exec: not learned, still works
exec("base = 20")
doubled = eval("base * 2")


def scaled(factor):
    return eval("base * factor")


print(Point(1, 2).x, base, doubled, scaled(3))
"""


def test_eval_and_exec_without_a_namespace_use_the_callers_when_learning_and_replayed(
    project: Path, home: Path
) -> None:
    """exec(source)/eval(source) with no dictionary read and bind the caller's names, as in plain
    Python: while learning (the source used to run in the replacement builtin's own frame, and
    the learner's first import re-entered itself), and replayed under eval-namespace=caller."""

    (project / "p.py").write_text(CALLER_PROGRAM)
    env = base_env(home)
    learned = run_sb(["--learn", "p.py"], cwd=project, env=env)
    assert learned.returncode == 0, learned.stderr
    assert learned.stdout == "1 20 40 60\n"
    text = (project / ".py-sandboxes").read_text()
    lines = text.splitlines()
    assert "# eval-namespace=caller" in lines  # one line: the widest namespace needed
    assert sum(line.startswith("# eval-namespace=") for line in lines) == 1
    replay = run_sb(["p.py"], cwd=project, env=env)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == "1 20 40 60\n"
    (project / ".py-sandboxes").write_text(guard_instead(text))
    replay = run_sb(["p.py"], cwd=project, env=env)  # guarded, in the caller's namespace
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == "1 20 40 60\n"
