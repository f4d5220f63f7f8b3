"""Path arguments as the kernel will see them: text of a path object, and where it lands.

Two closures, built at arm time:

- ``text_of(obj)``: the ``str`` a path argument stands for, without running program code.
  Exact ``str``/``bytes`` and their subclasses are copied with C slots; ``int`` is a
  descriptor (``FD``); ``os.DirEntry`` is a C type; ``pathlib`` paths are read from their
  cached ``_str`` slot after checking that ``__fspath__``/``__str__`` are still pathlib's own
  (CPython has already called ``__fspath__`` when the event fires: calling a program-defined
  ``__fspath__`` again could answer differently). Any other path-like object gives ``None``
  and is refused.
- ``resolve(path, base)``: the absolute path with ``.``/``..`` and every symbolic link
  resolved, as ``os.path.realpath`` does (missing tails are kept as written), written with
  the C module's ``lstat``/``readlink`` so that the program cannot replace the implementation.
  ``/proc/self/fd/N`` resolves through the kernel's magic links, which is how a ``dir_fd``
  argument is judged. With the compiled accelerator the walk runs in C (``path_walk``,
  guard/accelerator.py: the same steps on the file system's bytes; on Linux, for a path of
  three components or more, first the kernel's word that no link is on its way, whose answer
  is then the lexical one, in two or three system calls). Without it, on Linux, a
  deep path's directory part is resolved by the kernel itself (``kernel_resolve`` below: one
  ``open(O_PATH)`` and a ``readlink`` of its ``/proc/self/fd`` entry instead of one
  ``lstat`` per component, each of which costs a Python call); whenever that answer is not
  certain to be the walk's (a component missing or not searchable, a loop, no ``/proc``, a
  final symbolic link), the walk decides, so both give the same path. On Windows
  (``CAPS.path_flavour``): the lexical form of ``policy/pathforms.py`` (``..`` applied first,
  as Windows does; verbatim and device prefixes, alternate data streams and trailing dots or
  spaces refused), then the platform's final name (``nt._getfinalpathname``: links,
  junctions, 8.3 short names) of the part that exists.
- ``fd_path(fd)``: the path a descriptor is open on, by the platform's own query
  (``CAPS.fd_path``: ``/proc/self/fd`` on Linux, ``fcntl(F_GETPATH)`` on macOS), else
  ``None``; ``fd_known`` says whether ``None`` means "no path" (a pipe) or "not known here".
"""

from __future__ import annotations

import sys

from pysandboxes.guard.kit import Kit

if sys.platform == "win32":  # the C module, as guard/kit.py takes it
    import nt as native
else:
    import posix as native

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

#: ``text_of`` answer for a file descriptor (an ``int``: already opened, already judged).
FD = 1
_S_IFMT = 0o170000
_S_IFLNK = 0o120000
_MAX_LINKS = 40
#: The kernel resolves a path's directory part when the path has at least this many components
#: (its final name included): that costs six system calls (open, readlink, close, two stat to
#: check the answer, the final name's lstat) where the walk costs one per component and a
#: little less Python; the CPU times cross at 7 to 9 components (docs/performance.md).
KERNEL_MIN_DEPTH = 7
#: The same with the compiled accelerator, whose walk costs one ``lstat`` per component in C
#: (``path_walk``) and whose kernel resolution has no ``open`` event (``dir_path``): each
#: ``lstat`` looks every component before it up again, so the walk's cost grows with the
#: square of the depth and the kernel's with the depth; they cross at about this many
#: components (docs/performance.md; ``tarfile``'s tests make directories 130 deep). Before
#: either, on Linux, the compiled walk asks the kernel whether the path has no link on its way
#: (``openat2``, two system calls: the lexical answer then); the kernel's resolution of the
#: directory is for the paths it cannot answer so (a link, a missing component, no
#: ``openat2`` under python-sb's own seccomp filter).
KERNEL_MIN_DEPTH_COMPILED = 16
_DIR_FLAGS = (
    getattr(native, "O_PATH", 0)
    | getattr(native, "O_DIRECTORY", 0)
    | getattr(native, "O_CLOEXEC", 0)
)


def dir_request(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    _type: Callable[[object], Any] = type,
    _bytes: type = bytes,
    _len: Callable[[Any], int] = len,
    _flags: int = _DIR_FLAGS,
    _type_error: type[Exception] = TypeError,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The ``before`` of the resolver's hidden ``posix.open``: the one request it serves is
    ``(exact bytes path,)``, opened ``O_PATH | O_DIRECTORY | O_CLOEXEC`` with no ``dir_fd``
    (the ``open`` event does not carry one). A program that reached the hidden call could do
    no more with it than open a directory for its path, with the event judged as usual.
    Positional defaults: it runs after arming and this module is in ``sys.modules``."""

    if kwargs or _len(args) != 1 or _type(args[0]) is not _bytes:
        raise _type_error("python-sb: the resolver's open takes one bytes path")
    return (args[0], _flags), {}


class PathTools(NamedTuple):
    text_of: Callable[[Any], Any]
    resolve: Callable[[str, str | None], str]
    fd_path: Callable[[int], str | None]
    fd_known: bool  # fd_path answers for every descriptor that has a path
    windows: bool  # paths are Windows paths (policy/pathforms.py): ``\\``, case ignored


#: A path ``resolve`` refuses to judge on Windows starts with this (never a real path there).
REFUSED = "?"


def names_plainly(text: str) -> bool:
    """Whether the POSIX path text has no empty, ``.`` or ``..`` component after its first
    character (no ``//``, ``/./`` or ``/../``, no final ``/.`` or ``/..``): each component is a
    name as written, so a prefix test on the text is a test of where it leads, links aside. A
    name that merely begins with a dot (``~/.pyenv``, ``.venv``) is a name like any. The one
    test of this for the trusted-read shortcut (``file_events``) and the walk below a resolved
    base (``posix_resolve``)."""

    return (
        "//" not in text
        and "/./" not in text
        and "/../" not in text
        and not text.endswith(("/.", "/.."))
    )


def make_path_tools(
    kit: Kit,
    stdlib_dir: str,
    flavour: str | None = None,
    fd_query: str | None = None,
    kernel: bool | None = None,
    dir_path: Callable[[bytes], str | None] | None = None,
    compiled_walk: Callable[..., str | None] | None = None,
) -> PathTools:
    """The closures; ``flavour`` (``"posix"``/``"windows"``) and ``fd_query`` (``"proc"``,
    ``"fcntl"``, ``""``) default to this platform's (``platform_caps.CAPS``); tests pass them
    to run the other platforms' code here. ``kernel``: whether deep paths are resolved by the
    kernel (``kernel_resolve``); default: where ``/proc/self/fd`` answers for an ``O_PATH``
    descriptor now. ``dir_path`` and ``compiled_walk``: the compiled accelerator's
    (``guard/accelerator.py``). ``dir_path`` asks the kernel for a directory's name with no
    ``open`` event, in place of the hidden ``posix.open``; ``compiled_walk`` (``path_walk``)
    is the walk below in C, which answers ``None`` for text it does not walk (the Python walk
    answers then). With both, the kernel resolves from ``KERNEL_MIN_DEPTH_COMPILED``
    components and the C walk below that; with ``dir_path`` alone, from
    ``KERNEL_MIN_DEPTH``. Called before the wrappers replace ``posix.open``
    (``hook.install``)."""

    from pysandboxes.platform_caps import CAPS

    flavour = CAPS.path_flavour if flavour is None else flavour
    fd_query = CAPS.fd_path if fd_query is None else fd_query
    # Captured at arm time: the program can reach this module's namespace.
    captured_attributeerror = AttributeError
    captured_fd = FD
    captured_oserror = OSError
    captured_valueerror = ValueError
    captured_unicodeerror = UnicodeError
    captured_max_links = _MAX_LINKS
    captured_s_iflnk = _S_IFLNK
    captured_s_ifmt = _S_IFMT
    type_ = kit.type
    str_exact = kit.str_exact
    bytes_exact = kit.bytes_exact
    decode = kit.decode
    fspath = kit.fspath
    lstat = kit.lstat
    readlink = kit.readlink
    getcwd = kit.getcwd
    encoding = kit.fs_encoding
    str_ = str
    bytes_ = bytes
    int_ = int
    bool_ = bool
    dir_entry = native.DirEntry
    stat = kit.stat
    close = kit.close
    get_ident = kit.get_ident
    encode = str.encode
    str_count = str.count
    is_ascii = str.isascii
    utf8 = encoding == "utf-8"  # sys.getfilesystemencoding()'s name for it
    windows = flavour == "windows"
    captured_deleted = " (deleted)"
    captured_fd_dir = "/proc/self/fd/"
    plain_names = names_plainly
    #: The resolver's own ``open`` of a directory, by thread: the exact ``bytes`` object it
    #: passes, which ``text_of`` answers as "already judged" (``FD``) once, for the ``open``
    #: event that very call raises (see ``kernel_resolve``).
    own_open: dict[int, bytes] = {}
    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    function_type = type(make_path_tools)
    code_of = function_type.__dict__["__code__"].__get__
    member_type = type(captured_oserror.__dict__["errno"])  # types.MemberDescriptorType
    if flavour == "windows":
        pathlib_file = stdlib_dir.rstrip("\\/") + "\\pathlib.py"
    else:
        pathlib_file = stdlib_dir.rstrip("/") + "/pathlib.py"

    def pathlib_text(obj: Any) -> str | None:
        """The cached text of a genuine ``pathlib`` path, else ``None``."""

        fspath_ok = str_ok = False
        slot: Any = None
        for cls in mro_of(type_(obj)):
            # Items, not lookups: a key of the program's (a str subclass with the same hash)
            # would have its __eq__ called by a lookup -- code of the program inside the hook
            # (attacks/r3_disarm_class_dict_key_eq.py). No pathlib class has such a key.
            fspath_here = str_here = slot_here = None
            for key, value in dict_of(cls).items():
                if type_(key) is not str_:
                    return None
                if key == "__fspath__":
                    fspath_here = value
                elif key == "__str__":
                    str_here = value
                elif key == "_str":
                    slot_here = value
            if not fspath_ok and fspath_here is not None:
                if not _is_pathlib(fspath_here, "PurePath.__fspath__"):
                    return None
                fspath_ok = True
            if not str_ok and str_here is not None:
                if not _is_pathlib(str_here, "PurePath.__str__"):
                    return None
                str_ok = True
            if slot is None and slot_here is not None:
                slot = slot_here
        if not (fspath_ok and str_ok) or type_(slot) is not member_type:
            return None
        try:
            value = slot.__get__(obj)
        except captured_attributeerror:
            return None
        return value if type_(value) is str_ else None

    def _is_pathlib(func: Any, qualname: str) -> bool:
        if type_(func) is not function_type:
            return False
        code = code_of(func)
        return bool_(code.co_filename == pathlib_file and code.co_qualname == qualname)

    def fs_name(text: str) -> str:
        """``text`` as the name the kernel gets: its file system bytes decoded again. Two
        texts can make the same bytes (``"\\udcc3\\udca9"``, two escaped bytes, and ``"é"``
        are both ``c3 a9``): judged as written, a name that the rules hide or grant when
        written the one way would be judged as another file when written the other. Text
        that does not encode (a lone surrogate outside the escapes) is kept: the call fails
        on it. Windows passes text, not bytes: kept."""

        if windows or is_ascii(text):
            return text
        if utf8:
            try:
                encode(text)  # strict: text without surrogates is its UTF-8 bytes' own text
                return text
            except captured_unicodeerror:
                pass
        try:
            return decode(encode(text, encoding, "surrogateescape"), encoding, "surrogateescape")
        except captured_unicodeerror:
            return text

    def text_of(obj: Any) -> Any:
        kind = type_(obj)
        if kind is str_:
            return obj if is_ascii(obj) else fs_name(obj)
        if kind is bytes_:
            if own_open:
                ident = get_ident()
                if own_open.get(ident) is obj:
                    del own_open[ident]  # once: its own event, nothing else
                    return captured_fd
            return decode(obj, encoding, "surrogateescape")
        if kind is int_ or kind is bool_:
            return captured_fd
        if kind is dir_entry:
            return text_of(fspath(obj))
        # Subclasses, found through the MRO: isinstance() could call a program-defined
        # __class__ property inside the hook.
        for base in mro_of(kind):  # identity: "in" could call a metaclass __eq__
            if base is str_:
                return fs_name(str_exact(obj))
            if base is bytes_:
                return decode(bytes_exact(obj), encoding, "surrogateescape")
            if base is int_:
                return captured_fd
        found = pathlib_text(obj)
        return found if found is None else fs_name(found)

    def posix_resolve(path: str, base: str | None) -> str:
        path = fs_name(path)  # the walk, in C or not, and the kernel then agree on the text
        if not path.startswith("/"):
            base = getcwd() if base is None else fs_name(base)
            if (
                str_count(path, "/") < captured_min_depth
                and base.startswith("/")
                and plain_names(base)
            ):
                # Only the relative part is walked: ``base`` is the kernel's own name of a
                # directory (``getcwd``, a ``dir_fd``'s ``fd_path``) or a path resolved here
                # (a link's directory), with no link, "." or ".." in it (a base written
                # otherwise is walked again, as before), and
                # the kernel resolves a relative path from that directory itself, not from
                # its name. The walk of ``base + "/" + path`` would lstat each of base's
                # components to find none a link: the same path, one system call per
                # component more (rmtree's ``rmdir(name, dir_fd=fd)`` walked the whole
                # directory twice per entry).
                return walk(path, base)
            path = base + "/" + path
        if kernel_on and str_count(path, "/") >= captured_min_depth:
            if walk is accelerated_walk:
                # No link on the way, says the kernel: two system calls, fewer than the
                # kernel's resolution of the directory (six); None otherwise.
                found = compiled_walk(path, "", True)  # type: ignore[misc]
                if found is not None:
                    return found
            found = kernel_resolve(path)
            if found is not None:
                return found
        return walk(path)

    def kernel_resolve(path: str) -> str | None:
        """``walk(path)`` with the directory part resolved by the kernel, or ``None`` when
        the walk must decide.

        The directory is opened ``O_PATH`` by the hidden ``posix.open`` and its path read from
        ``/proc/self/fd/N``: every link followed and every ``..`` applied as the kernel does,
        as the walk does. Any failure (a component missing, not a directory, not searchable,
        a loop, a name too long, no ``/proc``) gives ``None``: the walk's answer for those
        (missing components kept as written) is not the kernel's. The ``open`` event of that
        call reaches the hook: its path is an exact ``bytes`` object made here, which
        ``text_of`` takes for "already judged" once, so that the event is neither judged (the
        directory of a readable file need not be readable) nor recorded as the program's
        ``open`` -- nothing else can pass the same object, made here and used once.

        Another thread of the program could close descriptor N and open another directory
        under the same number before the ``readlink``: the answer is taken only when the
        directory as written and the answer name the same inode (two ``stat``). A final
        component that is a symbolic link is left to the walk (its count of links is the
        whole path's)."""

        cut = path.rfind("/")
        name: str | None = path[cut + 1 :]
        if name == "" or name == "." or name == "..":
            directory, name = path, None
        else:
            directory = path[:cut]
        try:
            raw = encode(directory, encoding, "surrogateescape")
        except captured_valueerror:  # UnicodeEncodeError
            return None
        if kernel_dir is not None:  # compiled: the same three calls, no event, in C
            target = kernel_dir(raw) or ""
        else:
            ident = get_ident()
            if ident in own_open:  # the hook judging this thread's own open again: never
                return None
            own_open[ident] = raw
            try:
                fd = open_dir((raw,), {})  # type: ignore[misc]
            except (captured_oserror, captured_valueerror):
                return None
            finally:
                own_open.pop(ident, None)
            try:
                target = readlink(captured_fd_dir + int_.__repr__(fd))
            except captured_oserror:
                target = ""
            finally:
                try:  # noqa: SIM105  (contextlib.suppress is Python code the program could patch)
                    close(fd)
                except captured_oserror:
                    pass
        if not target.startswith("/") or target.endswith(captured_deleted):
            return None
        try:
            written = stat(directory)
            found = lstat(target)
        except (captured_oserror, captured_valueerror):
            return None
        if written.st_ino != found.st_ino or written.st_dev != found.st_dev:
            return None
        if name is None:
            return target
        candidate = (target if target != "/" else "") + "/" + name
        try:
            mode = lstat(candidate).st_mode
        except (captured_oserror, captured_valueerror):
            return candidate
        if mode & captured_s_ifmt == captured_s_iflnk:
            return None
        return candidate

    def python_walk(path: str, start: str = "") -> str:
        """``path`` resolved one component at a time: ``lstat``, and ``readlink`` for a link;
        a component that cannot be looked up is kept as written. ``start``: the resolved
        directory a relative ``path`` is below (absolute, no final "/"; ``""``: the root)."""

        pending = path.split("/")
        pending.reverse()
        resolved = start.rstrip("/")
        links = 0
        while pending:
            part = pending.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                resolved = resolved[: resolved.rfind("/")] if resolved else ""
                continue
            candidate = resolved + "/" + part
            try:
                mode = lstat(candidate).st_mode
            except (captured_oserror, captured_valueerror):
                resolved = candidate
                continue
            if mode & captured_s_ifmt == captured_s_iflnk:
                links += 1
                if links > captured_max_links:
                    resolved = candidate
                    continue
                try:
                    target = readlink(candidate)
                except captured_oserror:
                    resolved = candidate
                    continue
                if target.startswith("/"):
                    resolved = ""
                more = target.split("/")
                more.reverse()
                pending.extend(more)
            else:
                resolved = candidate
        return resolved or "/"

    def accelerated_walk(path: str, start: str = "") -> str:
        """The same walk in C (``compiled_walk``), the Python one for what it leaves."""

        if path == ".":  # the parent of an entry below a dir_fd: nothing to look up
            return start.rstrip("/") or "/"
        found = compiled_walk(path, start)  # type: ignore[misc]
        return python_walk(path, start) if found is None else found

    open_dir: Callable[[tuple[Any, ...], dict[str, Any]], int] | None = None
    kernel_dir: Callable[[bytes], str | None] | None = None
    walk = python_walk
    if flavour == "posix" and compiled_walk is not None:
        walk = accelerated_walk
    if flavour == "posix" and fd_query == "proc" and _DIR_FLAGS and kernel is not False:
        if dir_path is not None and (kernel is not None or dir_path(b"/") == "/"):
            kernel_dir = dir_path
        else:
            open_dir = _hidden_dir_open(kit, kernel is None)
    kernel_on = open_dir is not None or kernel_dir is not None
    captured_min_depth = KERNEL_MIN_DEPTH
    if walk is accelerated_walk:
        # Below a base the C walk always (the base is resolved); the kernel from this depth.
        captured_min_depth = KERNEL_MIN_DEPTH_COMPILED if kernel_on else 1 << 30
    resolve = _windows_resolve(kit) if flavour == "windows" else posix_resolve

    def proc_fd_path(fd: int) -> str | None:
        try:
            target = readlink("/proc/self/fd/" + int_.__repr__(fd))
        except captured_oserror:
            return None
        return target if target.startswith("/") else None

    def unknown_fd_path(fd: int) -> str | None:
        return None  # not known here (fd_known=False): the callers refuse what needs it

    fd_path: Callable[[int], str | None]
    if fd_query == "proc":
        fd_path = proc_fd_path
    elif fd_query == "fcntl":
        fd_path = _fcntl_fd_path(kit)
    else:
        fd_path = unknown_fd_path

    return PathTools(
        text_of=text_of,
        resolve=resolve,
        fd_path=fd_path,
        fd_known=bool_(fd_query),
        windows=flavour == "windows",
    )


def _hidden_dir_open(
    kit: Kit, probe: bool
) -> Callable[[tuple[Any, ...], dict[str, Any]], int] | None:
    """The C ``posix.open`` for directories only (:func:`dir_request`), kept in a hidden
    generator (``native_files.hide_reentrant``): a closure holding it would hand a program
    that reached the closure an ``open`` whose ``dir_fd`` the ``open`` event does not carry.
    ``None`` when ``posix.open`` is no longer the C function (replaced: armed already) or,
    with ``probe``, when ``/proc/self/fd`` does not name an ``O_PATH`` descriptor of ``/``
    (no ``/proc`` in this tree): the walk resolves everything then."""

    from pysandboxes.guard.native_files import hide_reentrant

    original = getattr(native, "open", None)
    if type(original) is not type(len):  # a builtin function: the C one
        return None
    open_dir: Callable[[tuple[Any, ...], dict[str, Any]], int] = hide_reentrant(
        original, kit, dir_request
    )
    if probe:
        try:
            fd = open_dir((b"/",), {})
        except OSError:
            return None
        try:
            answer = kit.readlink("/proc/self/fd/" + repr(fd))
        except OSError:
            answer = ""
        finally:
            kit.close(fd)
        if answer != "/":
            return None
    return open_dir


def _fcntl_fd_path(kit: Kit) -> Callable[[int], str | None]:
    """macOS: ``fcntl(fd, F_GETPATH, buffer)`` fills ``MAXPATHLEN`` (1024) bytes with the
    path; a descriptor without one (a pipe, a socket) fails with an ``OSError``."""

    if sys.platform == "win32":  # for type checkers: CAPS.fd_path is never "fcntl" there
        raise OSError("no fcntl on Windows")
    import fcntl

    query = fcntl.fcntl
    command: int = getattr(fcntl, "F_GETPATH")  # noqa: B009  (macOS only: CAPS.fd_path)
    buffer = bytes(1024)
    decode = kit.decode
    encoding = kit.fs_encoding
    captured_oserror = OSError
    bytes_find = bytes.find

    def fd_path(fd: int) -> str | None:
        try:
            raw = query(fd, command, buffer)
        except captured_oserror:
            return None
        end = bytes_find(raw, b"\0")
        text = decode(raw if end < 0 else raw[:end], encoding, "surrogateescape")
        return text if text.startswith("/") else None

    return fd_path


def _windows_resolve(kit: Kit) -> Callable[[str, str | None], str]:
    """``resolve`` for Windows paths (the module docstring). A form ``pathforms`` refuses
    gives :data:`REFUSED` followed by the path as written: no rule can match it (rules are
    absolute Windows paths), so it is refused, and the denial shows what was written."""

    from pysandboxes.policy.pathforms import make_windows_forms

    forms = make_windows_forms()
    absolute = forms.absolute
    join_existing = forms.join_existing
    getcwd = kit.getcwd
    stat = kit.stat
    refused = REFUSED
    captured_oserror = OSError
    captured_valueerror = ValueError
    final = _final_name()

    def exists(path: str) -> bool:
        try:
            stat(path)
        except (captured_oserror, captured_valueerror):
            return False
        return True

    def resolve(path: str, base: str | None) -> str:
        try:
            lexical = absolute(path, base if base is not None else getcwd())
        except captured_valueerror:
            return refused + path
        if final is None:
            return lexical
        try:
            return join_existing(lexical, exists, final)
        except (captured_oserror, captured_valueerror):
            return refused + path

    return resolve


def _final_name() -> Callable[[str], str] | None:
    """``nt._getfinalpathname`` on Windows; ``None`` elsewhere (the Windows forms run here in
    the unit tests, lexically)."""

    if sys.platform == "win32":
        import nt

        final: Callable[[str], str] = getattr(nt, "_getfinalpathname")  # noqa: B009
        return final
    return None
