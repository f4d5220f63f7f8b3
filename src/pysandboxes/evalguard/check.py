"""The check before running: parse a source, list every construct the rules do not allow.

Default-deny by ``ast`` node type (RestrictedPython's principle): a node whose class name no
``eval-syntax`` group or line allows is a violation, so a node type a new Python release adds is
refused until someone reviews it and adds it to a group (``rules.SYNTAX_GROUPS``). Identifiers
are NFKC-normalised by the parser itself (PEP 3131): a fullwidth ``eval`` is checked as ``eval``.

Every violation is collected before anything is reported: :class:`EvalSyntaxRejected` lists all
of them, each with the exact rule line that would allow it (or why none can).
"""

from __future__ import annotations

import ast
import builtins

from pysandboxes.errors import Denial, EvalSyntaxRejected
from pysandboxes.evalguard import rules as rules_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pysandboxes.evalguard.rules import EvalRules

#: Prefix of the names the rewrite adds; a source may not use it.
RESERVED = "_sb_"

_GROUP_OF: dict[str, str] = {
    node: group for group, nodes in rules_module.SYNTAX_GROUPS.items() for node in nodes
}
_BUILTINS = rules_module.builtin_names()
_EXCEPTION_BUILTINS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception)
)


def grantable(name: str) -> bool:
    """Whether ``eval-call=name`` can make the builtin ``name`` present."""

    if name in rules_module.NEVER_BUILTINS:
        return False
    return name in rules_module.GRANTABLE_BUILTINS or name in _EXCEPTION_BUILTINS


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class _Bindings(ast.NodeVisitor):
    """Names the source binds anywhere, and attribute names it stores or defines in classes
    (a source may read back what it wrote: ``self.total``)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.attributes: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.names.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.attributes.add(node.attr)
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.names.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.add(node.name)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.attributes.add(item.name)
            elif isinstance(item, ast.Assign):
                self.attributes.update(t.id for t in item.targets if isinstance(t, ast.Name))
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.attributes.add(item.target.id)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self.names.add(node.arg)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        self.names.add((node.asname or node.name).partition(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.names.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.names.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.names.add(node.rest)
        self.generic_visit(node)


class Checker(ast.NodeVisitor):
    """Walks every node; :attr:`violations` holds one :class:`Denial` per problem."""

    def __init__(self, rules: EvalRules, bound: _Bindings) -> None:
        self.rules = rules
        self.bound = bound
        self.violations: list[Denial] = []
        self._seen: set[tuple[str, str]] = set()
        self._line = 0  # the line of the last node that had one (operators have none)
        self._finally_depth = 0  # inside a finally block, not in a nested function
        self._loop_in_finally = 0  # loops opened inside that finally block
        self._star_ok: set[int] = set()  # starred targets the rewrite bounds (a, *b = it)

    # -- reporting -------------------------------------------------------------------------

    def refuse(self, node: ast.AST, target: str, what: str, suggestion: str | None) -> None:
        line = getattr(node, "lineno", 0) or self._line
        # One line per rule line to add (BinOp and Mult both ask for eval-syntax=arith).
        key = ("", suggestion) if suggestion else (target, what)
        if key in self._seen:
            return  # one line per distinct problem: the first place it appears
        self._seen.add(key)
        hint = f": add '{suggestion}'" if suggestion else ""
        self.violations.append(
            Denial("eval", target, None, None, suggestion, f"line {line}: {what}{hint}")
        )

    def _denied_by(self, base: str, item: str) -> str | None:
        for line in self.rules.lines:
            if line.key.partition(":")[0] != base:
                continue
            for part in line.value.split(","):
                if (
                    part.strip() == "DENY:" + item
                    or part.strip().replace(" ", "") == f"DENY:{item}"
                ):
                    return f"{line.text} at {line.origin}"
        return None

    # -- traversal -------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        self._line = getattr(node, "lineno", self._line)
        super().visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        kind = type(node).__name__
        if kind not in self.rules.nodes:
            if kind in rules_module.NEVER_NODES:
                self.refuse(
                    node, kind, f"{kind} cannot be allowed (it reads attributes unchecked)", None
                )
            else:
                denied = self._denied_by(
                    "eval-syntax", _GROUP_OF.get(kind, kind)
                ) or self._denied_by("eval-syntax", kind)
                if denied:
                    self.refuse(node, kind, f"syntax {kind} denied by {denied}", None)
                else:
                    group = _GROUP_OF.get(kind, kind)
                    self.refuse(
                        node,
                        kind,
                        f"syntax {kind} is not allowed",
                        f"{self.rules.key('eval-syntax')}={group}",
                    )
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self._identifier(node, node.id)
        if isinstance(node.ctx, ast.Load) and node.id not in self.bound.names:
            self._builtin(node, node.id)
        self.generic_visit(node)

    def _identifier(self, node: ast.AST, name: str) -> None:
        if name.startswith(RESERVED):
            self.refuse(node, name, f"the name {name} is reserved for the guard", None)
        elif _is_dunder(name) and name not in self.rules.magic:
            self._magic(node, name, f"the name {name}")

    def _magic(self, node: ast.AST, name: str, what: str) -> None:
        if name in rules_module.NEVER_MAGIC:
            self.refuse(node, name, f"{what} cannot be allowed (it leads out of the sandbox)", None)
        else:
            self.refuse(
                node, name, f"{what} is a dunder name", f"{self.rules.key('eval-magic')}={name}"
            )

    def _builtin(self, node: ast.AST, name: str) -> None:
        if name not in _BUILTINS or name in self.rules.calls:
            return  # not a builtin: the caller's name (names=) or a NameError when it runs
        if name in rules_module.NEVER_BUILTINS:
            reason = rules_module.NEVER_BUILTINS[name]
            self.refuse(node, name, f"{name} cannot be granted to evaluated code ({reason})", None)
        elif name in self.rules.denied_calls:
            self.refuse(node, name, f"{name} denied by {self._denied_by('eval-call', name)}", None)
        elif grantable(name):
            self.refuse(
                node,
                name,
                f"the builtin {name} is not granted",
                f"{self.rules.key('eval-call')}={name}",
            )
        else:
            self.refuse(node, name, f"the builtin {name} is not available to evaluated code", None)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._attribute(node, node.attr)
        self.generic_visit(node)

    def _attribute(self, node: ast.AST, name: str) -> None:
        rules = self.rules
        if name.startswith(RESERVED):
            self.refuse(node, name, f"the attribute {name} is reserved for the guard", None)
        elif _is_dunder(name):
            if name not in rules.magic:
                self._magic(node, name, f"the attribute {name}")
        elif name in rules.denied_attributes:
            self.refuse(
                node,
                name,
                f"the attribute {name} is denied by {self._denied_by('eval-attribute', name)}",
                None,
            )
        elif name.startswith("_"):
            if name not in rules.attributes:
                self.refuse(
                    node,
                    name,
                    f"the private attribute {name}",
                    f"{rules.key('eval-attribute')}={name}",
                )
        elif not rules.possible_attribute(name) and name not in self.bound.attributes:
            self.refuse(
                node,
                name,
                f"the attribute {name} is not granted",
                f"{rules.key('eval-attribute')}={name}",
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)
            if alias.asname:
                self._identifier(node, alias.asname)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.refuse(node, "." * node.level + (node.module or ""), "a relative import", None)
        else:
            self._module(node, node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self.refuse(node, "*", "import * (the names it binds cannot be checked)", None)
                continue
            if _is_dunder(alias.name) or alias.name.startswith("_"):
                self._attribute(node, alias.name)
            if alias.asname:
                self._identifier(node, alias.asname)
        self.generic_visit(node)

    def _module(self, node: ast.AST, name: str) -> None:
        if name in self.rules.imports:
            return
        top = name.partition(".")[0]
        if top in rules_module.NEVER_MODULES or any(p.startswith("_") for p in name.split(".")):
            self.refuse(node, name, f"module {name} cannot be granted to evaluated code", None)
        else:
            self.refuse(node, name, f"import of {name}", f"{self.rules.key('eval-import')}={name}")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda):
            self._identifier(node, node.name) if not _is_dunder(node.name) else self._method_name(
                node
            )
        saved = self._finally_depth, self._loop_in_finally
        self._finally_depth = self._loop_in_finally = 0
        self.generic_visit(node)
        self._finally_depth, self._loop_in_finally = saved

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def _method_name(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name not in self.rules.magic:
            self._magic(node, node.name, f"the method {node.name}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._identifier(node, node.name)
        for keyword in node.keywords:
            self.refuse(node, keyword.arg or "**", "class keywords (metaclass=...)", None)
        saved = self._finally_depth, self._loop_in_finally
        self._finally_depth = self._loop_in_finally = 0
        self.generic_visit(node)
        self._finally_depth, self._loop_in_finally = saved

    def visit_arg(self, node: ast.arg) -> None:
        self._identifier(node, node.arg)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None and _is_dunder(node.arg):
            self._identifier(node, node.arg)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._identifier(node, node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self._identifier(node, name)
        self.generic_visit(node)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def _try(self, node: ast.Try) -> None:
        for part in (node.body, node.handlers, node.orelse):
            for child in part:
                self.visit(child)
        self._finally_depth += 1
        saved = self._loop_in_finally
        self._loop_in_finally = 0
        for child in node.finalbody:
            self.visit(child)
        self._finally_depth -= 1
        self._loop_in_finally = saved
        kind = type(node).__name__
        if kind not in self.rules.nodes:
            self.refuse(
                node,
                kind,
                f"syntax {kind} is not allowed",
                f"{self.rules.key('eval-syntax')}=exception",
            )

    visit_Try = visit_TryStar = _try  # type: ignore[assignment]

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        if not isinstance(node, ast.While):
            self._unpacking([node.target])
        if self._finally_depth:
            self._loop_in_finally += 1
            self.generic_visit(node)
            self._loop_in_finally -= 1
        else:
            self.generic_visit(node)

    visit_For = visit_While = visit_AsyncFor = _loop

    def _unpacking(self, targets: list[ast.expr]) -> None:
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                self._star_ok.update(id(e) for e in target.elts if isinstance(e, ast.Starred))

    def visit_Assign(self, node: ast.Assign) -> None:
        self._unpacking(node.targets)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._unpacking([node.target])
        self.generic_visit(node)

    def visit_Starred(self, node: ast.Starred) -> None:
        if not isinstance(node.ctx, ast.Load) and id(node) not in self._star_ok:
            # the rewrite bounds the unpacking of a top-level starred target (a, *b = it);
            # one nested in another target or in with/as would be consumed by C unbounded
            self.refuse(
                node,
                "starred target",
                "a starred target inside a nested target or a with/as target (write "
                "a, rest = x then b, *c = rest)",
                None,
            )
        self.generic_visit(node)

    def _exit(self, node: ast.Return | ast.Break | ast.Continue) -> None:
        word = type(node).__name__.lower()
        in_finally = self._finally_depth and (
            isinstance(node, ast.Return) or not self._loop_in_finally
        )
        if in_finally:
            self.refuse(
                node,
                word,
                f"'{word}' in a finally block (it would swallow the guard's interruption)",
                None,
            )
        self.generic_visit(node)

    visit_Return = visit_Break = visit_Continue = _exit


def parse(source: str, mode: str, rules: EvalRules) -> ast.AST:
    """Parse and check ``source``; the tree, or :class:`EvalSyntaxRejected` listing every
    violation. A source that is not Python raises the parser's own ``SyntaxError``."""

    limit = max(4096, rules.max_nodes * 100)
    if len(source) > limit:
        suggestion = f"{rules.key('eval-max-nodes')}={len(source) // 100 + 1}"
        denial = Denial(
            "eval",
            "source size",
            None,
            None,
            suggestion,
            f"the source has {len(source)} characters, more than {limit} (100 per eval-max-nodes):"
            f" add '{suggestion}'",
        )
        raise EvalSyntaxRejected(_message([denial]), violations=[denial])
    tree = ast.parse(source, "<guarded-eval>", mode)
    count = sum(1 for _ in ast.walk(tree))
    bound = _Bindings()
    bound.visit(tree)
    checker = Checker(rules, bound)
    checker.visit(tree)
    if count > rules.max_nodes:
        checker.violations.append(
            Denial(
                "eval",
                "source size",
                None,
                None,
                f"{rules.key('eval-max-nodes')}={count}",
                f"the source has {count} syntax nodes, more than {rules.max_nodes}: add "
                f"'{rules.key('eval-max-nodes')}={count}'",
            )
        )
    if checker.violations:
        raise EvalSyntaxRejected(_message(checker.violations), violations=checker.violations)
    return tree


def _message(violations: list[Denial]) -> str:
    count = len(violations)
    lines = [
        f"evaluated source refused by the eval-* rules ({count} violation{'s' * (count != 1)}):"
    ]
    lines += [f"  {v.detail}" for v in violations]
    return "\n".join(lines)
