"""The precedence of path rules (SPEC §2.5), written once for every reader of it.

Two readers decide what a resolved path may do: :mod:`pysandboxes.policy.decide` (``--explain``,
learning, the providers' announcements) and the guard's audit hook (every ``open``), which keeps
its matcher in a closure no module global reaches (DESIGN decision 2) and adds the default
grants to the rules. Both build that matcher here, from the same three pieces, so that their
precedence is one by construction (issue 24, item 5), not two implementations held together by
a test:

- :func:`exposure_row` -- how an exposed path is written as a prefix and the text below it;
- :func:`order_rows` -- longest prefix first, read-write first at equal length;
- :func:`ignore_matchers` -- the ``ignore=`` globs: a glob naming one component hides every
  path with such a component, a glob with a separator hides the path it names and all below;
- :func:`make_path_matcher` -- ``ignore=`` beats every exposure, then the first row that holds
  the path, tried among the rows of the path's first component (:func:`group_rows`).

And the ``net=`` rules (SPEC §2.4), the same way: :func:`net_rows` compiles them into plain
tuples, DENY rules first, and :func:`make_net_matcher` answers with the first row that
matches -- a matching DENY wins from any file, then a matching ALLOW, else refused.

The matcher's closure reads no global after it is made (``tests/unit/guard/test_run_time_state``
reads this module's code as the guard's): the guard calls it after arming.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TypeVar

    from pysandboxes.policy.model import NetRule

    Kind = TypeVar("Kind")
    Info = TypeVar("Info")
    Answer = TypeVar("Answer")
    # (is_deny, proto, kind, name, version, network, mask, ports, direction, text, origin,
    #  index of the rule in the list given to net_rows)
    NetRow = tuple[bool, str, str, str, int, int, int, Any, str, str, str, int]

__all__ = [
    "exposure_row",
    "group_rows",
    "ignore_matchers",
    "make_net_matcher",
    "make_path_matcher",
    "net_rows",
    "order_rows",
]


def exposure_row(path: str, windows: bool) -> tuple[str, str]:
    """``(prefix, below)`` of an exposed ``path``: the text a path equal to the exposure has,
    and the text every path under it starts with. Windows paths (``policy/pathforms.py``) are
    compared lowered, ``\\`` separating; a drive's root keeps its separator."""

    if windows:
        prefix = path.lower()
        if not prefix.endswith(":\\"):
            prefix = prefix.rstrip("\\")
        return prefix, prefix if prefix.endswith("\\") else prefix + "\\"
    if path == "/":
        return "/", "/"
    import posixpath

    prefix = posixpath.normpath(path)
    if prefix.startswith("//"):  # normpath keeps two leading slashes (POSIX leaves them open)
        prefix = "/" + prefix.lstrip("/")
    return prefix, "/" if prefix == "/" else prefix + "/"


def order_rows(
    rows: Iterable[Any], prefix_of: Callable[[Any], str], writable: Callable[[Any], bool]
) -> list[Any]:
    """``rows`` in the order a path is matched against them: the longest prefix first (the
    most specific exposure decides), and at equal length a read-write one first (both were
    granted: the wider grant of the same path wins)."""

    return sorted(rows, key=lambda row: (-len(prefix_of(row)), not writable(row)))


def ignore_matchers(
    globs: Iterable[str], windows: bool
) -> tuple[Callable[[str], Any] | None, Callable[[str], Any] | None]:
    """``(names, anchored)``: ``fullmatch`` functions of the ``ignore=`` globs. ``names`` is
    matched against each component of a path (the globs with no separator: ``.env``);
    ``anchored`` against the whole path, and matches below what it names too (the globs with
    a separator: ``~/.ssh``). ``None`` where there is no glob of the kind."""

    from pysandboxes.policy.decide import glob_regex

    sep = "\\" if windows else "/"
    named: list[str] = []
    anchored: list[str] = []
    for glob in globs:
        text = glob.lower() if windows else glob
        (anchored if sep in glob else named).append(glob_regex(text, sep))
    if not named and not anchored:
        return None, None
    import re

    below = "(?:\\\\.*)?" if windows else "(?:/.*)?"
    names = re.compile("(?:" + "|".join(named) + ")", re.S).fullmatch if named else None
    whole = (
        re.compile("(?:" + "|".join(anchored) + ")" + below, re.S).fullmatch if anchored else None
    )
    return names, whole


def make_path_matcher(
    rows: Sequence[tuple[str, str, Kind, Info]],
    names: Callable[[str], Any] | None,
    anchored: Callable[[str], Any] | None,
    windows: bool,
    none: Kind,
    ignored: Kind,
    grouped: bool = True,
) -> Callable[[str], tuple[Kind, Info | None]]:
    """``match(resolved_path) -> (kind, info)`` over ``rows`` (``(prefix, below, kind, info)``
    in :func:`order_rows`'s order, prefixes from :func:`exposure_row`): ``(ignored, None)`` when
    an ``ignore=`` glob hides the path or a parent of it, else the kind and info of the first
    row holding it, else ``(none, None)``. The kinds are the caller's (the guard's integers,
    ``decide``'s words). The closure holds tuples, a dict and C functions only.

    POSIX rows are grouped by the first component of their prefix (:func:`group_rows`): the
    guard's table has some fifty rows (the default grants), which one list would try in turn
    for every file event. ``grouped=False`` keeps one list (the tests' reference: the grouping
    must not change an answer); Windows paths are never grouped."""

    table = tuple((prefix, below, kind, info) for prefix, below, kind, info in rows)
    if grouped and not windows:
        buckets, shared = group_rows(table)
    else:
        buckets, shared = {}, table
    bucket_of = buckets.get
    lower = str.lower
    sep = "\\" if windows else "/"

    def match(path: str) -> tuple[Kind, Info | None]:
        if windows:
            path = lower(path)
            if not path.endswith(":\\"):  # a drive's root keeps its separator
                path = path.rstrip(sep)
        elif path != "/":
            path = path.rstrip(sep)
        if anchored is not None and anchored(path) is not None:
            return ignored, None
        if names is not None:
            for part in path.split(sep):
                if part and names(part) is not None:
                    return ignored, None
        end = path.find(sep, 1)
        for prefix, below, kind, info in bucket_of(path[1:end] if end > 0 else path[1:], shared):
            if path == prefix or path.startswith(below):
                return kind, info
        return none, None

    return match


def group_rows(
    rows: tuple[tuple[str, str, Kind, Info], ...],
) -> tuple[
    dict[str, tuple[tuple[str, str, Kind, Info], ...]], tuple[tuple[str, str, Kind, Info], ...]
]:
    """``(buckets, shared)`` of POSIX ``rows`` (in :func:`order_rows`'s order, kept in each
    group): for each first component ``K`` of a *plain* row's prefix (an absolute path without
    a final ``/`` nor a leading ``//``, its ``below`` that path and ``/``), the rows of ``K``
    and the shared ones; ``shared``: the other rows (``/``, and any prefix that is not plain:
    none is, it is a safeguard). :func:`make_path_matcher` tries a path (its final ``/``
    removed) against the bucket of its first component, else ``shared``.

    The same answer as every row in turn: a plain row ``/K...`` holds a path only when the
    path is ``/K...`` itself or starts with ``/K.../``, so the path's first component is ``K``
    too -- a row left out of the path's bucket could not have held it (a relative path or one
    starting with ``//`` is held by no plain row), and the rows kept are tried in the same
    order, after the same ``ignore=`` checks."""

    # Loops, not comprehensions: the guard calls this when arming (test_run_time_state reads
    # this module's code as the guard's).
    keys: list[str | None] = []
    by_key: dict[str, list[tuple[str, str, Kind, Info]]] = {}
    for prefix, below, _kind, _info in rows:
        plain = prefix.startswith("/") and not prefix.startswith("//") and not prefix.endswith("/")
        key: str | None = None
        if plain and below == prefix + "/":
            end = prefix.find("/", 1)
            key = prefix[1:end] if end > 0 else prefix[1:]
            by_key.setdefault(key, [])
        keys.append(key)
    shared: list[tuple[str, str, Kind, Info]] = []
    for row, key in zip(rows, keys, strict=True):
        if key is not None:
            by_key[key].append(row)
        else:
            shared.append(row)
            for bucket in by_key.values():
                bucket.append(row)
    buckets: dict[str, tuple[tuple[str, str, Kind, Info], ...]] = {}
    for key, bucket in by_key.items():
        buckets[key] = tuple(bucket)
    return buckets, tuple(shared)


# -- network --------------------------------------------------------------------------------------


def net_rows(rules: Sequence[NetRule]) -> tuple[NetRow, ...]:
    """The ``net=`` rules as plain tuples, DENY rules first (each kind in the rules' order).

    A host name is compared lowered, without a final dot; an address rule is an integer range,
    and an IPv4-mapped IPv6 network (``::ffff:10.0.0.0/104``) is the IPv4 network it maps, as
    the addresses it is matched against are (an IPv4-mapped address is judged as IPv4)."""

    from pysandboxes.policy.netrules import host_key

    rows: list[NetRow] = []
    for index, rule in enumerate(rules):
        version = network = mask = 0
        if rule.host == "*":
            kind, name = "any", ""
        elif rule.is_name:
            kind, name = "name", host_key(rule.host)
        else:
            import ipaddress  # only for address rules

            net: Any = ipaddress.ip_network(rule.host, strict=False)
            if isinstance(net, ipaddress.IPv6Network) and net.prefixlen >= 96:
                mapped = int(net.network_address)
                if mapped >> 32 == 0xFFFF:
                    net = ipaddress.IPv4Network((mapped & 0xFFFFFFFF, net.prefixlen - 96))
            kind, name = "ip", ""
            version, network, mask = net.version, int(net.network_address), int(net.netmask)
        rows.append(
            (
                rule.action == "DENY",
                rule.proto,
                kind,
                name,
                version,
                network,
                mask,
                rule.ports,
                rule.direction,
                rule.text,
                str(rule.origin),
                index,
            )
        )
    rows.sort(key=_deny_first)
    return tuple(rows)


def _deny_first(row: NetRow) -> bool:
    return not row[0]


def make_net_matcher(
    rows: Sequence[NetRow], answers: Sequence[Answer], no_match: Answer
) -> Callable[[str, Any, Any, Any, str], Answer]:
    """``match(proto, names, ip_key, port, direction)``: ``answers[i]`` of the first of
    ``rows`` (:func:`net_rows`) that matches, else ``no_match``.

    ``proto`` and ``direction`` upper case (``proto`` ``"*"`` when not known: any protocol
    matches); ``names``: the host names the address stands for (a tuple, maybe empty), lowered;
    ``ip_key``: ``(version, integer)`` or ``None`` (not known yet: only ``*`` and host-name
    rules match); ``port``: ``None`` when not known (any port matches). The closure holds
    tuples only."""

    table = tuple(
        (rproto, kind, name, version, network, mask, ports, rdir, answer)
        for (
            _d,
            rproto,
            kind,
            name,
            version,
            network,
            mask,
            ports,
            rdir,
            _t,
            _o,
            _i,
        ), answer in zip(rows, answers, strict=True)
    )

    def match(proto: str, names: Any, key: Any, port: Any, direction: str) -> Answer:
        for rproto, kind, name, version, network, mask, ports, rdir, answer in table:
            if rproto != "*" and proto != "*" and rproto != proto:
                continue
            if rdir != "*" and rdir != direction:
                continue
            if ports is not None and port is not None:
                for lo, hi in ports:
                    if lo <= port <= hi:
                        break
                else:
                    continue
            if kind == "any":
                return answer
            if kind == "name":
                if name in names:
                    return answer
                continue
            if key is not None and key[0] == version and (key[1] & mask) == network:
                return answer
        return no_match

    return match
