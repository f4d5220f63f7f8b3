"""The rewrite of a checked tree: what the source does that can only be judged while it runs
goes through a helper of :mod:`pysandboxes.evalguard.runtime`.

- ``obj.name`` -> ``_sb_ga(obj, 'name')`` (decided by the object's type); a written attribute
  ``obj.name = v`` -> ``_sb_w(obj)['name'] = v`` (any target position);
- ``a + b``, ``*``, ``**``, ``<<``, ``%`` (and their augmented forms) -> checked helpers that
  estimate the size of the result first; an operand that is a number constant skips the check
  where it cannot grow the result (``i + 1``, ``x * 0.5``);
- ``for``/comprehension iterables -> ``_sb_compress(it, _sb_t)`` (one tick per item, in C);
  ``while test:`` -> ``for _ in _sb_t: if not test: <else>; break`` (same semantics);
- functions and lambdas -> wrapped by ``_sb_fn`` (call depth, call count); classes registered
  by ``_sb_cls`` and their bases mapped by ``_sb_base``;
- f-string fields with a spec or a conversion -> ``_sb_fmt(value, spec, conversion)``, the
  others ``{_sb_fv(value)}`` (the text of a shared list is counted first), and an f-string of
  several fields -> ``_sb_fjoin((part, ...))`` (one argument repeated by many fields);
- ``a[i:j] = it`` -> ``a[i:j] = _sb_star(it)`` (C consumes the iterable with no tick);
- ``except:`` -> ``except _sb_live() and Exception:``, ``except X`` -> ``except _sb_live() and
  _sb_exc(X)``, and every ``finally:`` block starts with ``_sb_live()``: while the guard's
  interruption unwinds, no expression of the source is evaluated and no ``finally`` body of
  the source runs (``_sb_live`` raises the interruption again), so nothing the source wrote
  can replace the interruption (an ``except (1/0):``, a ``finally`` that raises) or run
  after it (a ``finally`` that prints);
- ``import m`` / ``from m import n`` -> ``_sb_import`` / ``_sb_from`` (module views);
- ``x in y`` -> ``x in _sb_in(y)`` and ``*y`` -> ``*_sb_star(y)`` (and the value of an
  unpacking with a starred target): C code consumes an iterator there with no tick, so an
  iterator or a ``range`` is drawn through the ticks or counted first.
"""

from __future__ import annotations

import ast
import copy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_OPS: dict[type, str] = {
    ast.Add: "_sb_add",
    ast.Mult: "_sb_mul",
    ast.Pow: "_sb_pow",
    ast.LShift: "_sb_lshift",
    ast.Mod: "_sb_mod",
}
_IOPS: dict[type, str] = {ast.Add: "_sb_iadd", ast.Mult: "_sb_imul"}


def _name(ident: str, ctx: ast.expr_context | None = None) -> ast.Name:
    return ast.Name(id=ident, ctx=ctx or ast.Load())


def _call(helper: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(helper), args=list(args), keywords=[])


def _number(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float, complex, bool)
        and not (type(node.value) is int and abs(node.value) > 1 << 16)
    )


def _is_int(node: ast.expr) -> ast.expr:
    """``_sb_type(node) is _sb_int``."""

    return ast.Compare(left=_call("_sb_type", node), ops=[ast.Is()], comparators=[_name("_sb_int")])


def _int_fast_path(op: ast.operator, left: ast.expr, right: ast.expr) -> ast.expr | None:
    """For operands that are plain names (reading them twice changes nothing), the test under
    which the operation cannot allocate: ``i % 3`` when ``i`` is an int, ``a + b`` when both
    are ints. The checked helper runs otherwise. (A loop's arithmetic then costs no call.)"""

    is_int = _is_int

    def small(node: ast.Name) -> ast.expr:  # |n| < 2**62: a product of two cannot grow far
        return ast.Compare(
            left=ast.Constant(-_SMALL),
            ops=[ast.Lt(), ast.Lt()],
            comparators=[_name(node.id), ast.Constant(_SMALL)],
        )

    if not isinstance(left, ast.Name):
        if isinstance(op, ast.Mult) and _small_int(left) and isinstance(right, ast.Name):
            return ast.BoolOp(op=ast.And(), values=[is_int(_name(right.id)), small(right)])
        return None
    if isinstance(op, ast.Mod) and (isinstance(right, ast.Name) or _number(right)):
        return is_int(_name(left.id))
    if isinstance(op, ast.Add) and isinstance(right, ast.Name):
        return ast.BoolOp(op=ast.And(), values=[is_int(_name(left.id)), is_int(_name(right.id))])
    if isinstance(op, ast.Mult):
        if isinstance(right, ast.Name) and right.id == left.id:  # i * i
            return ast.BoolOp(op=ast.And(), values=[is_int(_name(left.id)), small(left)])
        if isinstance(right, ast.Name):
            tests = [is_int(_name(left.id)), is_int(_name(right.id)), small(left), small(right)]
            return ast.BoolOp(op=ast.And(), values=tests)
        if _small_int(right):  # n * 3
            return ast.BoolOp(op=ast.And(), values=[is_int(_name(left.id)), small(left)])
    return None


#: Bound of the operands of an inline int product (``runtime._SMALL``).
_SMALL = 1 << 62


def _small_int(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= 1 << 16


#: Displays whose ``in`` test and unpacking are bounded by what the source wrote.
_DISPLAYS = (
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.JoinedStr,
)


def _starred_target(target: ast.expr) -> bool:
    """Whether an unpacking target has a starred name at its top level (``a, *b``; the check
    refuses one anywhere else)."""

    return isinstance(target, (ast.Tuple, ast.List)) and any(
        isinstance(item, ast.Starred) for item in target.elts
    )


class Rewriter(ast.NodeTransformer):
    """See the module docstring. Run only on a tree the checker accepted."""

    def __init__(self) -> None:
        self._temp = 0
        #: The inline int paths whose value is an int when their test passes.
        self._int_results: set[ast.expr] = set()

    def temp(self) -> str:
        self._temp += 1
        return f"_sb_tmp{self._temp}"

    # -- attributes ------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        if isinstance(node.ctx, ast.Load):
            new: ast.expr = _call("_sb_ga", value, ast.Constant(node.attr))
        else:
            new = ast.Subscript(
                value=_call("_sb_w", value), slice=ast.Constant(node.attr), ctx=node.ctx
            )
        return ast.copy_location(new, node)

    # -- operators -------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        helper = _OPS.get(type(node.op))
        if helper is None:
            return node
        left, right = node.left, node.right
        if _number(left) and _number(right) and type(node.op) is not ast.Pow:
            return node
        if isinstance(node.op, ast.Add) and (_number(left) or _number(right)):
            return node
        if isinstance(node.op, ast.Mult) and (
            (_number(left) and isinstance(left, ast.Constant) and type(left.value) is float)
            or (_number(right) and isinstance(right, ast.Constant) and type(right.value) is float)
        ):
            return node
        if isinstance(node.op, ast.Mod) and _number(left):
            return node
        checked: ast.expr = _call(helper, left, right)
        fast = _int_fast_path(node.op, left, right)
        if fast is not None:
            checked = ast.IfExp(test=fast, body=ast.BinOp(left, node.op, right), orelse=checked)
            if isinstance(node.op, (ast.Add, ast.Mult)):
                # its test passed, the value is an int (int + int, int * int): what an
                # augmented sum needs to know of it (visit_AugAssign)
                self._int_results.add(checked)
        return ast.copy_location(checked, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        op = type(node.op)
        helper = _IOPS.get(op) or _OPS.get(op)
        if helper is None or (op is ast.Add and _number(node.value)):
            self.generic_visit(node)
            return node
        value = self.visit(node.value)
        target = node.target
        statements: list[ast.stmt] = []
        if isinstance(target, ast.Name):
            load: ast.expr = _name(target.id)
            store: ast.expr = _name(target.id, ast.Store())
            if op is ast.Add and value in self._int_results:
                # total += i * i, the product's inline path: one test for both (the total an
                # int, the product's own test), so that no temporary holds the product (its
                # operands are plain names: reading them again changes nothing). Otherwise
                # the checked sum of the total and the value as it was (evaluated once).
                assert isinstance(value, ast.IfExp)
                checked = ast.IfExp(
                    test=ast.BoolOp(
                        op=ast.And(), values=[_is_int(_name(target.id)), copy.deepcopy(value.test)]
                    ),
                    body=ast.BinOp(_name(target.id), node.op, copy.deepcopy(value.body)),
                    orelse=_call(helper, _name(target.id), value),
                )
                return ast.copy_location(ast.Assign(targets=[store], value=checked), node)
            if op in (ast.Add, ast.Mod) and not (isinstance(value, ast.Name) or _number(value)):
                # total += i * i: the value into a temporary name first (evaluated once), so
                # that the int test can read it (no call when both are ints)
                held = self.temp()
                statements.append(
                    ast.copy_location(
                        ast.Assign(targets=[_name(held, ast.Store())], value=value), node
                    )
                )
                value = _name(held)
            fast = _int_fast_path(node.op, load, value)
            if fast is not None:  # total += i: no call when both are ints
                checked = ast.IfExp(
                    test=fast,
                    body=ast.BinOp(_name(target.id), node.op, value),
                    orelse=_call(helper, _name(target.id), value),
                )
                statements.append(ast.Assign(targets=[store], value=checked))
                for statement in statements:
                    ast.copy_location(statement, node)
                return statements if len(statements) > 1 else statements[0]
        elif isinstance(target, ast.Attribute):
            holder = self.temp()
            statements.append(
                ast.Assign(targets=[_name(holder, ast.Store())], value=self.visit(target.value))
            )
            load = _call("_sb_ga", _name(holder), ast.Constant(target.attr))
            store = ast.Subscript(
                value=_call("_sb_w", _name(holder)),
                slice=ast.Constant(target.attr),
                ctx=ast.Store(),
            )
        else:
            assert isinstance(target, ast.Subscript)
            holder, key = self.temp(), self.temp()
            statements.append(
                ast.Assign(targets=[_name(holder, ast.Store())], value=self.visit(target.value))
            )
            statements.append(
                ast.Assign(targets=[_name(key, ast.Store())], value=self.visit(target.slice))
            )
            load = ast.Subscript(value=_name(holder), slice=_name(key), ctx=ast.Load())
            store = ast.Subscript(value=_name(holder), slice=_name(key), ctx=ast.Store())
        statements.append(ast.Assign(targets=[store], value=_call(helper, load, value)))
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    # -- membership and unpacking ----------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        node.comparators = [
            _call("_sb_in", right)
            if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(right, _DISPLAYS)
            else right
            for op, right in zip(node.ops, node.comparators, strict=True)
        ]
        return node

    def visit_Starred(self, node: ast.Starred) -> Any:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and not isinstance(node.value, _DISPLAYS):
            node.value = ast.copy_location(_call("_sb_star", node.value), node.value)
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        if any(
            _starred_target(target)
            or (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Slice))
            for target in node.targets
        ) and not isinstance(node.value, _DISPLAYS):
            # a, *b = it and a[i:j] = it: C code consumes the iterable with no tick
            node.value = ast.copy_location(_call("_sb_star", node.value), node.value)
        return node

    def _starred_items(self, iterable: ast.expr) -> ast.expr:
        """``for a, *b in it``: each item is unpacked by C code, so each goes through
        ``_sb_star`` (``_sb_stars``; the loop's ticks count the items)."""

        return ast.copy_location(_call("_sb_stars", iterable), iterable)

    # -- loops -----------------------------------------------------------------------------

    def _ticked(self, iterable: ast.expr) -> ast.expr:
        return ast.copy_location(_call("_sb_compress", iterable, _name("_sb_t")), iterable)

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        if _starred_target(node.target):
            node.iter = self._starred_items(node.iter)
        node.iter = self._ticked(node.iter)
        return node

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        self.generic_visit(node)
        tick = ast.copy_location(ast.Expr(_call("_sb_tick")), node)
        node.body.insert(0, tick)
        return node

    def visit_While(self, node: ast.While) -> Any:
        self.generic_visit(node)
        leave = ast.If(
            test=ast.UnaryOp(op=ast.Not(), operand=node.test),
            body=[*node.orelse, ast.Break()],
            orelse=[],
        )
        loop = ast.For(
            target=_name("_sb_", ast.Store()),
            iter=_name("_sb_t"),
            body=[leave, *node.body],
            orelse=[],
        )
        return ast.copy_location(loop, node)

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        self.generic_visit(node)
        if _starred_target(node.target):
            node.iter = self._starred_items(node.iter)
        if not node.is_async:
            node.iter = self._ticked(node.iter)
        return node

    # -- functions and classes -------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        self.generic_visit(node)
        node.decorator_list.append(ast.copy_location(_name("_sb_fn"), node))
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self.generic_visit(node)
        return ast.copy_location(_call("_sb_fn", node), node)

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.generic_visit(node)
        node.bases = [ast.copy_location(_call("_sb_base", base), base) for base in node.bases]
        node.decorator_list.append(ast.copy_location(_name("_sb_cls"), node))
        return node

    # -- f-strings ------------------------------------------------------------------------

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        self.generic_visit(node)
        if node.format_spec is None and node.conversion == -1:
            if isinstance(node.value, ast.Constant):
                return node
            node.value = ast.copy_location(_call("_sb_fv", node.value), node.value)
            return node
        spec = node.format_spec if node.format_spec is not None else ast.Constant("")
        value = _call("_sb_fmt", node.value, spec, ast.Constant(node.conversion))
        return ast.copy_location(
            ast.FormattedValue(value=value, conversion=-1, format_spec=None), node
        )

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        """An f-string of two fields or more: each field formatted in order, then joined by
        ``_sb_fjoin`` once the sizes are counted (``f'{big}{big}{big}'`` repeats one
        string). A single field is bounded by its own check."""

        self.generic_visit(node)
        fields = [part for part in node.values if isinstance(part, ast.FormattedValue)]
        if len(fields) < 2:
            return node
        parts: list[ast.expr] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                # a field alone: an f-string of one FormattedValue (format(value), no join)
                parts.append(ast.copy_location(ast.JoinedStr(values=[part]), part))
            else:
                parts.append(part)
        joined = _call("_sb_fjoin", ast.Tuple(elts=parts, ctx=ast.Load()))
        return ast.copy_location(joined, node)

    # -- exceptions -----------------------------------------------------------------------

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        self.generic_visit(node)
        if node.type is None:
            kinds: ast.expr = ast.copy_location(_name("_sb_Exception"), node)
        else:
            kinds = ast.copy_location(_call("_sb_exc", node.type), node.type)
        # _sb_live() first: evaluated only while an exception propagates, it raises the
        # interruption again when that exception is the guard's (see the module docstring)
        live = ast.copy_location(_call("_sb_live"), kinds)
        node.type = ast.copy_location(ast.BoolOp(op=ast.And(), values=[live, kinds]), kinds)
        return node

    def _try(self, node: ast.Try | ast.TryStar) -> Any:
        self.generic_visit(node)
        if node.finalbody:
            first = node.finalbody[0]
            node.finalbody.insert(0, ast.copy_location(ast.Expr(_call("_sb_live")), first))
        return node

    visit_Try = visit_TryStar = _try

    # -- imports --------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> Any:
        statements = []
        for alias in node.names:
            bind = alias.asname or alias.name.partition(".")[0]
            view_of = alias.name if alias.asname else alias.name.partition(".")[0]
            statements.append(
                ast.copy_location(
                    ast.Assign(
                        targets=[_name(bind, ast.Store())],
                        value=_call("_sb_import", ast.Constant(alias.name), ast.Constant(view_of)),
                    ),
                    node,
                )
            )
        return statements

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        statements = []
        for alias in node.names:
            statements.append(
                ast.copy_location(
                    ast.Assign(
                        targets=[_name(alias.asname or alias.name, ast.Store())],
                        value=_call(
                            "_sb_from", ast.Constant(node.module), ast.Constant(alias.name)
                        ),
                    ),
                    node,
                )
            )
        return statements


def rewrite(tree: ast.AST) -> ast.AST:
    """The rewritten tree, locations fixed, ready for ``compile``."""

    new: ast.AST = Rewriter().visit(tree)
    return ast.fix_missing_locations(new)
