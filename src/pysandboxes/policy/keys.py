"""The keys of the rule language (SPEC §2.2): which exist, single or list, and value checks
that need no file system (names, categories, ``eval-*`` values, provider parameters).

Adding a provider parameter: add it to :data:`PROVIDER_PARAMS` with a checker that returns the
normalised value or raises ``ValueError`` with the message; ``docs/rules.md`` lists them.
"""

from __future__ import annotations

from pysandboxes.policy.model import API_CATEGORIES, PROVIDERS

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "EVAL_GROUPS",
    "EVAL_LIST_KEYS",
    "EVAL_SINGLE_KEYS",
    "LIST_KEYS",
    "PROVIDER_PARAMS",
    "SINGLE_KEYS",
    "check_api_target",
    "check_eval",
    "check_provider_param",
    "suggest_key",
]

SINGLE_KEYS: tuple[str, ...] = ("py-sandbox", "os-sandbox", "learn")
LIST_KEYS: tuple[str, ...] = (
    "env",
    "unenv",
    "expose-ro",
    "expose-rw",
    "ignore",
    "python-import",
    "python-api",
    "net",
    "secret",
    "acknowledge",
)

EVAL_LIST_KEYS: tuple[str, ...] = (
    "eval-syntax",
    "eval-call",
    "eval-attribute",
    "eval-import",
    "eval-magic",
)
EVAL_SINGLE_KEYS: tuple[str, ...] = (
    "eval-namespace",
    "eval-timeout",
    "eval-max-iterations",
    "eval-max-call-depth",
    "eval-max-alloc",
    "eval-max-nodes",
    "eval-max-output",
)

#: ``eval-syntax`` groups (SPEC §3.6); an exact ``ast`` node class name is accepted too.
EVAL_GROUPS: tuple[str, ...] = (
    "arith",
    "compare",
    "conditional",
    "loop",
    "comprehension",
    "assign",
    "func",
    "subscript",
    "fstring",
    "exception",
    "context",
    "import",
    "yield",
    "async",
    "class",
)
#: ``eval-attribute`` groups.
EVAL_ATTRIBUTE_GROUPS: tuple[str, ...] = (
    "str-methods",
    "list-methods",
    "tuple-methods",
    "dict-methods",
    "set-methods",
    "num-methods",
    "date-methods",
)
EVAL_NAMESPACES: tuple[str, ...] = ("closed", "adaptive", "caller")
#: The group that holds a type's methods, for a ``TYPE-methods`` group that does not exist.
_TYPE_GROUPS: dict[str, str] = {
    "string": "str-methods",
    "bytes": "str-methods",
    "bytearray": "str-methods",
    "frozenset": "set-methods",
    "int": "num-methods",
    "float": "num-methods",
    "complex": "num-methods",
    "bool": "num-methods",
    "number": "num-methods",
    "fraction": "num-methods",
    "decimal": "num-methods",
    "datetime": "date-methods",
    "time": "date-methods",
    "timedelta": "date-methods",
}


def _identifier(text: str) -> bool:
    return text.isidentifier() and text.isascii()


def _dotted(text: str) -> bool:
    return bool(text) and all(_identifier(part) for part in text.split("."))


# -- python-api -------------------------------------------------------------------------------


def check_api_target(target: str) -> str | None:
    """``None`` if ``target`` is ``*``, a category or a dotted function name, else a message."""

    if target == "*" or target in API_CATEGORIES:
        return None
    if "." in target and _dotted(target):
        return None
    near = suggest(target, API_CATEGORIES)
    hint = f" (did you mean {near}?)" if near else ""
    return (
        f"unknown python-api target {target!r}{hint}: a target is *, a category "
        f"({', '.join(API_CATEGORIES)}) or a dotted function name such as os.system"
    )


# -- acknowledge ------------------------------------------------------------------------------


def check_limit_id(item: str) -> str | None:
    """``None`` if ``item`` is written as the id of an announced limit (``files.system-trees``,
    ``all.no-enforcer``: a kind, a dot, a name), else a message. Which ids exist is the
    providers' table (``providers/limits.py``): the command line checks them against it, as
    this layer does not import the providers."""

    def word(part: str) -> bool:
        return (
            bool(part)
            and part.isascii()
            and all(c.islower() or c.isdigit() or c == "-" for c in part)
        )

    kind, dot, name = item.partition(".")
    if dot and word(kind) and word(name):
        return None
    return (
        f"bad acknowledge item {item!r}: the id of an announced limit, such as "
        "all.no-enforcer or files.system-trees (python-sb --explain names each limit's id)"
    )


# -- provider parameters ------------------------------------------------------------------------


def _hostname(value: str) -> str:
    ok = (
        0 < len(value) <= 63
        and all(c.isascii() and (c.isalnum() or c == "-") for c in value)
        and not value.startswith("-")
        and not value.endswith("-")
    )
    if not ok:
        raise ValueError(
            f"{value!r} is not a host name: 1-63 letters, digits or '-', not starting or "
            "ending with '-'"
        )
    return value


def _switch(value: str) -> str:
    lowered = value.lower()
    if lowered in ("true", "yes", "allow", "1"):
        return "true"
    if lowered in ("false", "no", "deny", "0"):
        return "false"
    raise ValueError(f"{value!r} is not true or false")


def _size(value: str) -> str:
    number = value[:-1] if value[-1:].upper() in ("K", "M", "G") else value
    if not number.isdigit() or not number.isascii() or int(number) == 0:
        raise ValueError(f"{value!r} is not a size: write a number with K, M or G, such as 1G")
    return value.upper()


#: The least memory a guest is given: its kernel and the initramfs holding Python (about 70 MB
#: with Debian's kernel) must fit; 64M did not boot, 96M did (measured).
_GUEST_MEMORY_MIN = 128 << 20


def _guest_memory(value: str) -> str:
    size = _size(value)
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
    number = int(size[:-1] if size[-1:] in ("K", "M", "G") else size)
    if number * scale < _GUEST_MEMORY_MIN:
        raise ValueError(
            f"{value!r} is too little for the guest: at least 128M (its kernel and the "
            "initramfs holding Python must fit; the default is 512M)"
        )
    return size


def _count(value: str) -> str:
    if not value.isdigit() or not value.isascii() or not 0 < int(value) <= 1024:
        raise ValueError(f"{value!r} is not a count from 1 to 1024")
    return str(int(value))


def _file_path(value: str) -> str:
    if not value:
        raise ValueError("empty path")
    return value  # made absolute by the loader (see PATH_PARAMS)


def _seconds(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number <= 3600:
        raise ValueError(f"{value!r} is not a number of seconds from 0 to 3600")
    return value


def _accel(value: str) -> str:
    if value not in ("auto", "kvm", "tcg"):
        raise ValueError(f"{value!r} is not an accelerator: auto, kvm or tcg")
    return value


#: Known parameters of each provider: name → checker (returns the normalised value).
PROVIDER_PARAMS: dict[str, dict[str, Callable[[str], str]]] = {
    "none": {},
    "subprocess": {},
    "landlock": {"unix-sockets": _switch},
    "bwrap": {"hostname": _hostname},
    "unshare": {"hostname": _hostname},
    "qemu": {
        "memory": _guest_memory,
        "cpus": _count,
        "kernel": _file_path,
        "initrd": _file_path,
        "accel": _accel,
        "boot-timeout": _seconds,
        "saved-state": _switch,
    },
}
#: Parameters whose value is a path: ``~``, ``./`` and relative paths are made absolute.
PATH_PARAMS: frozenset[str] = frozenset({"qemu.kernel", "qemu.initrd"})


def check_provider_param(provider: str, param: str, value: str) -> str:
    """The normalised value of ``provider.param=value``; ``ValueError`` with the message."""

    known = PROVIDER_PARAMS[provider]
    checker = known.get(param)
    if checker is None:
        names = ", ".join(f"{provider}.{p}" for p in sorted(known)) or "none"
        raise ValueError(f"unknown {provider} parameter {param!r} (known: {names})")
    return checker(value)


# -- eval-* -------------------------------------------------------------------------------------


def _digits(text: str) -> str | None:
    """``500_000`` -> ``500000``: ASCII digits, ``_`` allowed between them as in Python
    literals (issue 26: budgets are written as people write them); ``None`` if not such."""

    if not text or text.startswith("_") or text.endswith("_") or "__" in text:
        return None
    plain = text.replace("_", "")
    return plain if plain.isdigit() and plain.isascii() else None


def _timeout(value: str) -> str:
    """A duration: ``2s``, ``1.5s``, ``500ms`` (also ``2 s``, ``1_000ms``); the normal form
    has no space and no ``_`` (the one ``evalguard/rules.py`` reads)."""

    text = value.strip().lower()
    unit = "ms" if text.endswith("ms") else "s" if text.endswith("s") else ""
    number = text[: len(text) - len(unit)].rstrip()
    whole, dot, fraction = number.partition(".")
    whole_digits = _digits(whole) if whole or not dot else "0"
    fraction_digits = _digits(fraction) if dot else ""
    if not unit or whole_digits is None or fraction_digits is None or not number:
        raise ValueError(
            f"bad eval-timeout {value!r}: write a duration in s or ms, such as 2s, 1.5s or 500ms"
        )
    normal = whole_digits + (f".{fraction_digits}" if dot else "")
    amount = float(normal) * (0.001 if unit == "ms" else 1.0)
    if not 0 < amount <= 86400:
        raise ValueError(f"bad eval-timeout {value!r}: between 1ms and 86400s")
    return normal + unit


#: Multiples a budget may end with (binary, as in ``64M``); ``KB``/``KiB`` spell ``K`` too.
_BUDGET_UNITS = {"": "", "b": ""} | {
    f"{letter}{tail}": letter.upper() for letter in "kmg" for tail in ("", "b", "ib")
}


def _budget(value: str) -> str:
    """A positive count or size: ``500000``, ``500_000``, ``64M``, ``20MB``, ``20 MiB``
    (``K``, ``M``, ``G`` and their ``KB``/``KiB`` spellings are binary multiples, as
    everywhere in the rules). The normal form is digits and an optional ``K``/``M``/``G``:
    the one ``evalguard/rules.py`` reads."""

    text = value.strip()
    split = len(text)
    while split and not text[split - 1].isdigit():
        split -= 1
    number, unit = text[:split].rstrip(), text[split:].strip().lower()
    digits = _digits(number)
    if unit not in _BUDGET_UNITS or digits is None or int(digits) == 0:
        raise ValueError(
            f"bad budget {value!r}: a positive integer, '_' allowed between digits, with an "
            "optional K, M or G (binary multiples; KB, MiB... mean the same), such as 500_000, "
            "64M or 20MB"
        )
    return str(int(digits)) + _BUDGET_UNITS[unit]


def _eval_item(key: str, item: str) -> str | None:
    """A message if ``item`` is not a valid element of the list key ``key``."""

    if key == "eval-syntax":
        if item in EVAL_GROUPS:
            return None
        if _identifier(item) and item[:1].isupper():
            import ast

            node = getattr(ast, item, None)
            if isinstance(node, type) and issubclass(node, ast.AST):
                return None
        near = suggest(item, EVAL_GROUPS)
        return f"unknown eval-syntax group or ast node {item!r}" + (
            f" (did you mean {near}?)" if near else ""
        )
    if key == "eval-attribute":
        if item in EVAL_ATTRIBUTE_GROUPS:
            return None
        if _identifier(item) and not (item.startswith("__") and item.endswith("__")):
            return None
        kind = item.removesuffix("-methods").lower() if item.endswith("-methods") else ""
        group = _TYPE_GROUPS.get(kind)
        if group:
            return f"unknown eval-attribute group {item!r}: the methods of {kind} are in {group}"
        return f"bad eval-attribute {item!r}: a non-dunder attribute name or a group " + (
            f"({', '.join(EVAL_ATTRIBUTE_GROUPS)}); dunder names go in eval-magic"
        )
    if key == "eval-magic":
        if _identifier(item) and item.startswith("__") and item.endswith("__") and len(item) > 4:
            return None
        return f"bad eval-magic {item!r}: a dunder name such as __len__"
    if key in ("eval-call", "eval-import"):
        if _dotted(item):
            return None
        return f"bad {key} item {item!r}: a name or a dotted name"
    return None  # pragma: no cover - key checked by the caller


def check_eval(key: str, value: str) -> tuple[str, str | None, str]:
    """Check one ``eval-*`` line: ``(base key, profile or None, normalised value)``.

    ``key`` may carry a profile: ``eval-call:calc``. Raises ``ValueError`` with the message.
    """

    base, colon, profile = key.partition(":")
    if colon and not _identifier(profile):
        raise ValueError(f"bad profile name {profile!r} in {key}: a Python identifier")
    if base in EVAL_LIST_KEYS:
        items = [item.strip() for item in value.split(",")]
        problems = []
        for item in items:
            name = item[5:].strip() if item.startswith("DENY:") else item
            if not name:
                problems.append(f"empty item in {key}={value}")
                continue
            message = _eval_item(base, name)
            if message:
                problems.append(message)
        if problems:
            raise ValueError("; ".join(problems))
        return base, profile or None, value
    if base == "eval-namespace":
        if value not in EVAL_NAMESPACES:
            raise ValueError(f"bad eval-namespace {value!r}: expected {', '.join(EVAL_NAMESPACES)}")
        return base, profile or None, value
    if base == "eval-timeout":
        return base, profile or None, _timeout(value)
    if base in EVAL_SINGLE_KEYS:
        return base, profile or None, _budget(value)
    raise KeyError(base)


def is_eval_key(key: str) -> bool:
    base = key.partition(":")[0]
    return base in EVAL_LIST_KEYS or base in EVAL_SINGLE_KEYS


# -- suggestions ----------------------------------------------------------------------------------


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str | None:
    """The closest of ``choices`` to a misspelt ``word`` (error path only: imports difflib)."""

    import difflib

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def all_keys() -> list[str]:
    keys = [*SINGLE_KEYS, *LIST_KEYS, *EVAL_LIST_KEYS, *EVAL_SINGLE_KEYS]
    for provider, params in PROVIDER_PARAMS.items():
        keys.extend(f"{provider}.{param}" for param in params)
    return keys


def suggest_key(key: str) -> str:
    """The message for an unknown key."""

    if key == "denials":
        return (
            "unknown key 'denials': the denials file is a command-line option "
            "(--denials=FILE), not a rule"
        )
    provider, dot, _param = key.partition(".")
    if dot and provider not in PROVIDERS:
        near = suggest(provider, list(PROVIDERS))
        return f"unknown provider {provider!r} in key {key!r}" + (
            f" (did you mean {near}?)" if near else f" (providers: {', '.join(PROVIDERS)})"
        )
    near = suggest(key, all_keys())
    return f"unknown key {key!r}" + (f" (did you mean {near}?)" if near else "")
