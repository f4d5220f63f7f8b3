"""A shell command as a tree: the parser behind ``python-sb --hook``.

An agent hands its hook one string of shell text. Deciding on a list of tokens is wrong on the
first ``bash -c``, ``$(...)`` or heredoc, so this module parses the text the way bash reads it:
lists (``;``, ``&``, newlines), ``&&``/``||``, pipelines, ``{ ...; }`` groups, ``( ... )``
subshells, ``if``/``while``/``until``/``for``/``select``/``case``, ``((...))`` and ``[[...]]``,
function definitions, redirections and heredocs, and inside each word the quoting
(``'...'``, ``"..."``, ``$'...'``, backslashes) and the substitutions (``$(...)``, backticks,
``<(...)``/``>(...)``, ``${...}``, ``$((...))``), each substitution parsed as a command of its
own.

The result keeps what the hook needs and nothing else: every simple command with its
assignments, words and redirections, each word as parts (literal text, a variable, a nested
command...), so that the checker can tell a literal ``python3`` from ``$PYTHON`` and a heredoc
body (data) from the command that reads it. Text that bash would reject, or that this parser
does not understand, raises :class:`ShellSyntaxError`: the hook refuses what it cannot read
(fail closed) rather than guessing.

Standard library only, no ``re``: the hook runs before every shell command an agent issues.
"""

from __future__ import annotations

__all__ = ["Node", "Redirect", "ShellSyntaxError", "Word", "parse"]

#: Characters that end an unquoted word.
_META = frozenset(" \t\n;&|<>()")
#: Reserved words that may end a list (they are only reserved in command position).
_CLOSERS = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
_MAX_DEPTH = 64


class ShellSyntaxError(ValueError):
    """The text is not a shell command this parser can read (``pos`` is a character offset)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} (at character {pos + 1})")
        self.pos = pos


class Word:
    """One shell word: a list of parts.

    Each part is a tuple whose first item says what it is:

    - ``("lit", text, quoted)``: literal text; ``quoted`` when it came from quotes or a
      backslash (so glob characters in it are not special, and ``'if'`` is no keyword);
    - ``("var", name)``: ``$name`` / ``${name}``;
    - ``("pexp", name, text)``: any other ``${...}`` form (``${X:-y}``, ``${#X}``...): unknown
      value; ``text`` is what follows the ``$`` sign and ``#``/``!`` (``X:=y`` assigns X);
    - ``("sub", node)``: ``$(...)``, a backtick command, ``<(...)`` or ``>(...)``;
    - ``("arith", text)``: ``$((...))``;
    - ``("tilde", text)``: a leading unquoted ``~`` or ``~user``.

    ``nested`` lists the commands parsed inside substitutions (also those inside ``${...}``).
    """

    __slots__ = ("nested", "parts", "raw")

    def __init__(self, parts: list[tuple[object, ...]], raw: str, nested: list[Node]) -> None:
        self.parts = parts
        self.raw = raw
        self.nested = nested

    def literal(self) -> str | None:
        """The word's value when it is made of literal text only (quotes removed), else None."""

        out = []
        for part in self.parts:
            if part[0] != "lit":
                return None
            out.append(str(part[1]))
        return "".join(out)

    def is_plain(self, text: str) -> bool:
        """The word is exactly ``text``, unquoted (how reserved words are recognized)."""

        return (
            len(self.parts) == 1
            and self.parts[0][0] == "lit"
            and not self.parts[0][2]
            and self.parts[0][1] == text
        )

    def __repr__(self) -> str:
        return f"Word({self.raw!r})"


class Redirect:
    """A redirection: ``op`` (``>``, ``>>``, ``<``, ``<<``, ``<<<``, ``&>``...), its target word,
    and for a heredoc its ``body`` text and whether the delimiter was quoted (then the body is
    data only; otherwise its ``$(...)`` run, and ``body_nested`` holds them)."""

    __slots__ = ("body", "body_nested", "fd", "op", "quoted", "target")

    def __init__(self, op: str, target: Word | None, fd: str = "") -> None:
        self.op = op
        self.target = target
        self.fd = fd
        self.body: str | None = None
        self.quoted = False
        self.body_nested: list[Node] = []


class Node:
    """A node of the command tree.

    ``kind`` is one of ``list`` (``children``: and-or lists, run in order), ``andor``
    (``children``: pipelines), ``pipeline`` (``children``: commands, each in its own
    process), ``simple`` (``assigns``, ``words``, ``redirects``), ``group`` (``{ }``),
    ``subshell`` (``( )``), ``if``, ``while``, ``for``, ``case``, ``arith``, ``cond``,
    ``function`` (``name`` and its body in ``children``). Compound commands keep their
    words (``for`` lists, ``case`` subjects and patterns, ``[[ ]]`` operands) in ``words`` and
    their trailing redirections in ``redirects``.
    """

    __slots__ = ("assigns", "children", "kind", "name", "redirects", "words")

    def __init__(self, kind: str, children: list[Node] | None = None) -> None:
        self.kind = kind
        self.children: list[Node] = children if children is not None else []
        self.words: list[Word] = []
        self.assigns: list[tuple[str, Word]] = []
        self.redirects: list[Redirect] = []
        self.name = ""

    def __repr__(self) -> str:
        if self.kind == "simple":
            return f"Simple({[w.raw for w in self.words]!r})"
        return f"{self.kind}({self.children!r})"


def parse(text: str) -> Node:
    """Parse ``text`` as bash would; a ``list`` node. :class:`ShellSyntaxError` if it can't."""

    parser = _Parser(text)
    tree = parser.parse_list(frozenset())
    parser.skip_separators()
    if parser.pos < len(text):
        raise ShellSyntaxError(f"unexpected {text[parser.pos]!r}", parser.pos)
    if parser.pending:
        # bash runs a heredoc that reaches the end of the text, with a warning: so does this.
        for redirect in parser.pending:
            redirect.body = ""
    return tree


def _is_name(text: str) -> bool:
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return False
    return all(c.isalnum() or c == "_" for c in text)


def _ansi_c(text: str) -> str:
    """Decode the escapes of a ``$'...'`` string (the common ones; others kept as written)."""

    simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b"}
    simple.update({"f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"})
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        n = text[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n == "x":
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(text[i + 2 : j], 16)) if j > i + 2 else "\\x")
            i = j
        elif n in "01234567":
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(chr(int(text[i + 1 : j], 8)))
            i = j
        else:
            out.append("\\" + n)
            i += 2
    return "".join(out)


class _Parser:
    """Recursive descent over the text; ``pending`` holds heredocs whose body follows the next
    newline."""

    def __init__(self, text: str, depth: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.pending: list[Redirect] = []
        self.depth = depth

    # -- characters ------------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def startswith(self, token: str) -> bool:
        return self.text.startswith(token, self.pos)

    def error(self, message: str) -> ShellSyntaxError:
        return ShellSyntaxError(message, self.pos)

    def skip_blanks(self) -> None:
        """Spaces, tabs, line continuations and comments; not newlines."""

        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in " \t":
                self.pos += 1
            elif c == "\\" and self.peek(1) == "\n":
                self.pos += 2
            elif c == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def newline(self) -> None:
        """Consume one newline, then the bodies of the heredocs started on that line."""

        self.pos += 1
        pending, self.pending = self.pending, []
        for redirect in pending:
            self.read_heredoc(redirect)

    def skip_newlines(self) -> None:
        while True:
            self.skip_blanks()
            if self.peek() != "\n":
                return
            self.newline()

    def skip_separators(self) -> None:
        while True:
            self.skip_newlines()
            if self.peek() == ";" and self.peek(1) != ";":
                self.pos += 1
                continue
            return

    def read_heredoc(self, redirect: Redirect) -> None:
        delimiter = redirect.target.literal() if redirect.target is not None else None
        assert delimiter is not None
        strip = redirect.op == "<<-"
        lines = []
        text = self.text
        while True:
            if self.pos >= len(text):
                break  # delimited by the end of the text (bash warns, and runs it)
            end = text.find("\n", self.pos)
            line = text[self.pos : len(text) if end < 0 else end]
            self.pos = len(text) if end < 0 else end + 1
            check = line.lstrip("\t") if strip else line
            if check == delimiter:
                break
            lines.append(check)
        body = "\n".join(lines) + ("\n" if lines else "")
        redirect.body = body
        if not redirect.quoted:
            # An unquoted delimiter: the body is expanded like a double-quoted word, so its
            # $(...) and backticks run. Parse them; the rest is data.
            sub = _Parser(body, self.depth + 1)
            word = sub.parse_dquoted_text()
            redirect.body_nested = word.nested

    # -- words -----------------------------------------------------------------------------------

    def peek_reserved(self) -> str | None:
        """The unquoted bare word at the position, if any (to recognize reserved words)."""

        text = self.text
        i = self.pos
        while i < len(text) and text[i] not in _META and text[i] not in "'\"\\$`":
            i += 1
        if i == self.pos:
            return None
        if i < len(text) and text[i] in "'\"\\$`":
            return None
        return text[self.pos : i]

    def parse_word(self) -> Word:
        """One word at the position (the caller has skipped blanks)."""

        start = self.pos
        parts: list[tuple[object, ...]] = []
        nested: list[Node] = []
        text = self.text
        first = True
        while self.pos < len(text):
            c = text[self.pos]
            if c in "<>" and self.peek(1) == "(" and first:
                self.pos += 2
                node = self.parse_list(frozenset({")"}))
                self.expect_char(")")
                parts.append(("sub", node))
                nested.append(node)
            elif c == "(" and parts and parts[-1][0] == "lit" and not parts[-1][2]:
                last = str(parts[-1][1])
                if not last or last[-1] not in "@!+*?":
                    break
                parts.append(("lit", self.balanced_raw("(", ")"), False))  # an extglob
            elif c in _META:
                break
            elif c == "\\":
                if self.peek(1) == "\n":
                    self.pos += 2
                elif self.pos + 1 < len(text):
                    parts.append(("lit", text[self.pos + 1], True))
                    self.pos += 2
                else:
                    self.pos += 1
            elif c == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise self.error("unterminated single quote")
                parts.append(("lit", text[self.pos + 1 : end], True))
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                self.parse_dquoted(parts, nested, '"')
            elif c == "$":
                self.parse_dollar(parts, nested, quoted=False)
            elif c == "`":
                self.parse_backtick(parts, nested)
            elif c == "~" and first:
                j = self.pos + 1
                while j < len(text) and text[j] not in _META and text[j] not in "/'\"\\$`":
                    j += 1
                parts.append(("tilde", text[self.pos : j]))
                self.pos = j
            else:
                j = self.pos + 1
                while j < len(text) and text[j] not in _META and text[j] not in "\\'\"$`(":
                    j += 1
                parts.append(("lit", text[self.pos : j], False))
                self.pos = j
            first = False
        if self.pos == start:
            raise self.error(f"expected a word, found {self.peek() or 'the end'!r}")
        return Word(_merge(parts), text[start : self.pos], nested)

    def balanced_raw(self, open_: str, close: str) -> str:
        """The text from an opening bracket to its match (quotes respected), consumed."""

        start = self.pos
        depth = 0
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "\\":
                self.pos += 2
                continue
            if c == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise self.error("unterminated single quote")
                self.pos = end + 1
                continue
            if c == '"':
                self.pos += 1
                self.parse_dquoted([], [], '"')
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return text[start : self.pos]
            self.pos += 1
        raise self.error(f"no matching {close!r}")

    def parse_dquoted(self, parts: list[tuple[object, ...]], nested: list[Node], end: str) -> None:
        """The inside of "..." up to ``end`` (consumed); ``end == ""`` reads to the end of the
        text (a heredoc body)."""

        text = self.text
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(("lit", "".join(buf), True))
                buf.clear()

        while True:
            if self.pos >= len(text):
                if end:
                    raise self.error("unterminated double quote")
                break
            c = text[self.pos]
            if end and c == end:
                self.pos += 1
                break
            if c == "\\":
                n = self.peek(1)
                if n == "\n":
                    self.pos += 2
                elif n in ("$", "`", '"', "\\") and (n != '"' or end):
                    buf.append(n)
                    self.pos += 2
                else:
                    buf.append(c)
                    self.pos += 1
            elif c == "$":
                flush()
                self.parse_dollar(parts, nested, quoted=True)
            elif c == "`":
                flush()
                self.parse_backtick(parts, nested)
            else:
                buf.append(c)
                self.pos += 1
        flush()

    def parse_dquoted_text(self) -> Word:
        parts: list[tuple[object, ...]] = []
        nested: list[Node] = []
        self.parse_dquoted(parts, nested, "")
        return Word(_merge(parts), self.text, nested)

    def parse_dollar(
        self, parts: list[tuple[object, ...]], nested: list[Node], *, quoted: bool
    ) -> None:
        text = self.text
        n = self.peek(1)
        if n == "(" and self.peek(2) == "(":
            self.pos += 1
            raw = self.balanced_raw("(", ")")
            parts.append(("arith", raw))
            nested.extend(self.arith_commands(raw))
        elif n == "(":
            self.pos += 2
            node = self.parse_list(frozenset({")"}))
            self.expect_char(")")
            parts.append(("sub", node))
            nested.append(node)
        elif n == "{":
            self.pos += 1
            raw = self.balanced_raw("{", "}")
            inner = raw[1:-1]
            if _is_name(inner) or inner in ("@", "*", "#", "?", "$", "!", "-") or inner.isdigit():
                parts.append(("var", inner))
            else:
                j = 1 if inner[:1] in ("#", "!") else 0
                k = j
                while k < len(inner) and (inner[k].isalnum() or inner[k] == "_"):
                    k += 1
                parts.append(("pexp", inner[j:k] or inner, inner[j:]))
                self.nested_in(inner, nested)
        elif n == "'" and not quoted:
            end = self.pos + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise self.error("unterminated $'...' string")
            parts.append(("lit", _ansi_c(text[self.pos + 2 : end]), True))
            self.pos = end + 1
        elif n == '"' and not quoted:
            self.pos += 2
            self.parse_dquoted(parts, nested, '"')
        elif n and (n.isalpha() or n == "_"):
            j = self.pos + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            parts.append(("var", text[self.pos + 1 : j]))
            self.pos = j
        elif n and (n.isdigit() or n in "@*#?$!-"):
            parts.append(("var", n))
            self.pos += 2
        else:
            parts.append(("lit", "$", quoted))
            self.pos += 1

    def arith_commands(self, raw: str) -> list[Node]:
        """The commands an arithmetic ``((...))`` may run: its ``$(...)``, and, since bash reads
        ``((cmd))`` as two nested subshells when it is no expression, the text as commands."""

        nested: list[Node] = []
        self.nested_in(raw, nested)
        try:
            nested.append(parse_nested(raw[1:-1], self.depth + 1))
        except ShellSyntaxError:
            return nested  # an arithmetic expression, as expected
        return nested

    def nested_in(self, raw: str, nested: list[Node]) -> None:
        """The commands substituted inside ``raw`` (a ``${...}`` or ``$((...))`` body)."""

        if "$(" not in raw and "`" not in raw:
            return
        sub = _Parser(raw, self.depth + 1)
        nested.extend(sub.parse_dquoted_text().nested)

    def parse_backtick(self, parts: list[tuple[object, ...]], nested: list[Node]) -> None:
        text = self.text
        i = self.pos + 1
        buf = []
        while i < len(text) and text[i] != "`":
            if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "$`\\":
                buf.append(text[i + 1])
                i += 2
            else:
                buf.append(text[i])
                i += 1
        if i >= len(text):
            raise self.error("unterminated backtick")
        self.pos = i + 1
        if self.depth >= _MAX_DEPTH:
            raise self.error("commands nested too deeply")
        node = parse_nested("".join(buf), self.depth + 1)
        parts.append(("sub", node))
        nested.append(node)

    def expect_char(self, char: str) -> None:
        self.skip_newlines()
        if self.peek() != char:
            raise self.error(f"expected {char!r}, found {self.peek() or 'the end'!r}")
        self.pos += 1

    def expect_word(self, word: str) -> None:
        self.skip_separators()
        if self.peek_reserved() != word:
            raise self.error(f"expected {word!r}")
        self.pos += len(word)

    # -- grammar ---------------------------------------------------------------------------------

    def at_end_of_list(self, terms: frozenset[str]) -> bool:
        c = self.peek()
        if not c or c == ")":
            return True
        if c == ";" and self.peek(1) == ";":
            return True
        if self.startswith(";&"):
            return True
        return self.peek_reserved() in _CLOSERS

    def parse_list(self, terms: frozenset[str]) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.error("commands nested too deeply")
        items: list[Node] = []
        while True:
            self.skip_newlines()
            if self.at_end_of_list(terms):
                break
            items.append(self.parse_and_or())
            self.skip_blanks()
            c = self.peek()
            if (c == ";" and self.peek(1) not in (";", "&")) or (
                c == "&" and self.peek(1) != "&" and self.peek(1) != ">"
            ):
                self.pos += 1
            elif c == "\n":
                continue
            elif self.at_end_of_list(terms):
                break
            else:
                raise self.error(f"unexpected {c!r}")
        self.depth -= 1
        return Node("list", items)

    def parse_and_or(self) -> Node:
        items = [self.parse_pipeline()]
        while True:
            self.skip_blanks()
            if self.startswith("&&") or self.startswith("||"):
                self.pos += 2
                self.skip_newlines()
                items.append(self.parse_pipeline())
            else:
                break
        return items[0] if len(items) == 1 else Node("andor", items)

    def parse_pipeline(self) -> Node:
        self.skip_blanks()
        while True:
            word = self.peek_reserved()
            if word == "!":
                self.pos += 1
            elif word == "time":
                self.pos += 4
                self.skip_blanks()
                if self.peek_reserved() == "-p":
                    self.pos += 2
            else:
                break
            self.skip_blanks()
        commands = [self.parse_command()]
        while True:
            self.skip_blanks()
            if self.peek() == "|" and self.peek(1) != "|":
                self.pos += 2 if self.peek(1) == "&" else 1
                self.skip_newlines()
                commands.append(self.parse_command())
            else:
                break
        return commands[0] if len(commands) == 1 else Node("pipeline", commands)

    def parse_command(self) -> Node:
        self.skip_blanks()
        word = self.peek_reserved()
        c = self.peek()
        node: Node
        if not c:
            raise self.error("a command is missing at the end")
        if c == "(" and self.peek(1) == "(":
            node = Node("arith")
            raw = self.balanced_raw("(", ")")
            node.children = self.arith_commands(raw)
            node.name = raw  # the expression (its assignments set variables)
        elif c == "(":
            self.pos += 1
            node = Node("subshell", [self.parse_list(frozenset({")"}))])
            self.expect_char(")")
        elif word == "{":
            self.pos += 1
            node = Node("group", [self.parse_list(frozenset({"}"}))])
            self.expect_word("}")
        elif word in ("if",):
            node = self.parse_if()
        elif word in ("while", "until"):
            self.pos += len(word)
            cond = self.parse_list(frozenset({"do"}))
            self.expect_word("do")
            body = self.parse_list(frozenset({"done"}))
            self.expect_word("done")
            node = Node("while", [cond, body])
        elif word in ("for", "select"):
            node = self.parse_for(word)
        elif word == "case":
            node = self.parse_case()
        elif word == "[[":
            node = self.parse_cond()
        elif word == "function":
            self.pos += len(word)
            self.skip_blanks()
            name = self.parse_word()
            self.skip_blanks()
            if self.startswith("()"):
                self.pos += 2
            self.skip_newlines()
            node = Node("function", [self.parse_command()])
            node.name = name.raw
            return node
        elif word is not None and word in _CLOSERS:
            raise self.error(f"unexpected {word!r}")
        elif c in ";&|)":
            raise self.error(f"unexpected {c!r}")
        else:
            return self.parse_simple()
        self.parse_redirects(node)
        return node

    def parse_redirects(self, node: Node) -> None:
        while True:
            self.skip_blanks()
            if not self.at_redirect():
                return
            node.redirects.append(self.parse_redirect())

    def at_redirect(self) -> bool:
        text = self.text
        i = self.pos
        while i < len(text) and text[i].isdigit():
            i += 1
        if i < len(text) and text[i] == "{" and i == self.pos:
            end = text.find("}", i)
            if end > i and _is_name(text[i + 1 : end]) and text[end + 1 : end + 2] in ("<", ">"):
                return True
        if i < len(text) and text[i] in "<>":
            return text[i + 1 : i + 2] != "("
        return text.startswith("&>", self.pos)

    def parse_redirect(self) -> Redirect:
        text = self.text
        start = self.pos
        if text[self.pos] == "{":
            self.pos = text.find("}", self.pos) + 1
        while self.peek().isdigit():
            self.pos += 1
        fd = text[start : self.pos]
        for op in ("<<<", "<<-", "<<", "&>>", "&>", ">>", ">&", ">|", "<&", "<>", ">", "<"):
            if text.startswith(op, self.pos):
                break
        self.pos += len(op)
        self.skip_blanks()
        target = self.parse_word()
        redirect = Redirect(op, target, fd)
        if op in ("<<", "<<-"):
            delimiter = target.literal()
            if delimiter is None:
                raise self.error("a heredoc delimiter with an expansion")
            redirect.quoted = any(len(p) > 2 and p[2] for p in target.parts)
            self.pending.append(redirect)
        return redirect

    def parse_simple(self) -> Node:
        node = Node("simple")
        while True:
            self.skip_blanks()
            c = self.peek()
            if not c or (c in ";&|)\n" and not self.startswith("&>")):
                break
            if self.at_redirect():
                node.redirects.append(self.parse_redirect())
                continue
            if c == "(":
                if len(node.words) == 1 and not node.assigns and not node.redirects:
                    self.pos += 1
                    self.skip_blanks()
                    if self.peek() != ")":
                        raise self.error("expected ')' in a function definition")
                    self.pos += 1
                    self.skip_newlines()
                    func = Node("function", [self.parse_command()])
                    func.name = node.words[0].raw
                    return func
                raise self.error("unexpected '('")
            if c == "<" or c == ">":  # a process substitution
                node.words.append(self.parse_word())
                continue
            if not node.words and self.at_assignment():
                name, value = self.parse_assignment()
                node.assigns.append((name, value))
                continue
            node.words.append(self.parse_word())
        if not node.words and not node.assigns and not node.redirects:
            raise self.error(f"expected a command, found {self.peek() or 'the end'!r}")
        return node

    def at_assignment(self) -> bool:
        text = self.text
        i = self.pos
        while i < len(text) and (text[i].isalnum() or text[i] == "_"):
            i += 1
        if i == self.pos or text[self.pos].isdigit():
            return False
        if i < len(text) and text[i] == "[":
            end = text.find("]", i)
            if end < 0:
                return False
            i = end + 1
        if text.startswith("+=", i):
            return True
        return i < len(text) and text[i] == "="

    def parse_assignment(self) -> tuple[str, Word]:
        text = self.text
        eq = text.find("=", self.pos)
        name = text[self.pos : eq].rstrip("+")
        if "[" in name:
            name = name[: name.index("[")]
        self.pos = eq + 1
        if self.peek() == "(":  # an array: NAME=(a b c)
            start = self.pos
            self.pos += 1
            nested: list[Node] = []
            parts: list[tuple[object, ...]] = []
            while True:
                self.skip_newlines()
                if self.peek() == ")":
                    self.pos += 1
                    break
                if not self.peek():
                    raise self.error("unterminated array assignment")
                word = self.parse_word()
                nested.extend(word.nested)
            parts.append(("pexp", name))
            return name, Word(parts, text[start : self.pos], nested)
        if not self.peek() or self.peek() in _META:
            return name, Word([("lit", "", False)], "", [])
        return name, self.parse_word()

    def parse_if(self) -> Node:
        node = Node("if")
        self.pos += 2
        while True:
            node.children.append(self.parse_list(frozenset({"then"})))
            self.expect_word("then")
            node.children.append(self.parse_list(frozenset({"elif", "else", "fi"})))
            self.skip_separators()
            word = self.peek_reserved()
            if word == "elif":
                self.pos += 4
                continue
            if word == "else":
                self.pos += 4
                node.children.append(self.parse_list(frozenset({"fi"})))
                self.skip_separators()
                word = self.peek_reserved()
            if word != "fi":
                raise self.error("expected 'fi'")
            self.pos += 2
            return node

    def parse_for(self, keyword: str) -> Node:
        node = Node("for")
        self.pos += len(keyword)
        self.skip_blanks()
        if self.startswith("(("):
            raw = self.balanced_raw("(", ")")
            nested: list[Node] = []
            self.nested_in(raw, nested)
            node.children.extend(nested)
        else:
            node.name = self.parse_word().raw
            self.skip_newlines()
            if self.peek_reserved() == "in":
                self.pos += 2
                while True:
                    self.skip_blanks()
                    c = self.peek()
                    if not c or c in ";\n":
                        break
                    node.words.append(self.parse_word())
        self.skip_separators()
        if self.peek_reserved() == "{":
            self.pos += 1
            node.children.append(self.parse_list(frozenset({"}"})))
            self.expect_word("}")
            return node
        self.expect_word("do")
        node.children.append(self.parse_list(frozenset({"done"})))
        self.expect_word("done")
        return node

    def parse_case(self) -> Node:
        node = Node("case")
        self.pos += 4
        self.skip_blanks()
        node.words.append(self.parse_word())
        self.skip_newlines()
        if self.peek_reserved() != "in":
            raise self.error("expected 'in'")
        self.pos += 2
        while True:
            self.skip_newlines()
            if self.peek_reserved() == "esac":
                self.pos += 4
                return node
            if not self.peek():
                raise self.error("expected 'esac'")
            if self.peek() == "(":
                self.pos += 1
            while True:
                self.skip_blanks()
                node.words.append(self.parse_word())
                self.skip_blanks()
                if self.peek() == "|":
                    self.pos += 1
                    continue
                break
            self.expect_char(")")
            node.children.append(self.parse_list(frozenset({"esac"})))
            self.skip_blanks()
            for token in (";;&", ";;", ";&"):
                if self.startswith(token):
                    self.pos += len(token)
                    break

    def parse_cond(self) -> Node:
        node = Node("cond")
        self.pos += 2
        while True:
            self.skip_newlines()
            if self.peek_reserved() == "]]":
                self.pos += 2
                return node
            c = self.peek()
            if not c:
                raise self.error("expected ']]'")
            if c in "()<>!&|":
                self.pos += 1
                continue
            word = self.parse_word()
            node.words.append(word)


def parse_nested(text: str, depth: int) -> Node:
    """Parse the text of a backtick substitution (a separate parse, as bash does)."""

    parser = _Parser(text, depth)
    tree = parser.parse_list(frozenset())
    parser.skip_separators()
    if parser.pos < len(text):
        raise ShellSyntaxError(f"unexpected {text[parser.pos]!r} inside backticks", parser.pos)
    for redirect in parser.pending:
        redirect.body = ""
    return tree


def _merge(parts: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Join adjacent literal parts of the same quoting."""

    out: list[tuple[object, ...]] = []
    for part in parts:
        if out and part[0] == "lit" and out[-1][0] == "lit" and out[-1][2] == part[2]:
            out[-1] = ("lit", str(out[-1][1]) + str(part[1]), part[2])
        else:
            out.append(part)
    return out
