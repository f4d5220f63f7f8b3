"""The guest kernel and initramfs of ``os-sandbox=qemu``, built once from installed files.

Nothing is ever downloaded at run time. The guest boots a distribution kernel found on this
machine (``qemu.kernel=``, the running kernel's image in /boot, or the one ``scripts/setup.sh``
unpacked from the Debian package into ``/var/cache/python-sb/qemu-kernel`` or
``~/.cache/python-sb/qemu-kernel``) with an initramfs written here:

- ``/bin/busybox`` (a static busybox: the only program that runs before the 9p root exists);
- the kernel modules the guest needs (virtio-mmio, virtio-serial, 9p, virtio-net), resolved from the
  ``depends=`` field of each module's ``.modinfo`` section, in load order, uncompressed;
- ``/init``, a busybox shell script (:data:`INIT_SCRIPT`): load the modules, mount the 9p root,
  open the ``pysb`` virtio-serial port, and switch to the host's own Python running
  ``_qemu_guest``.

Both artefacts go to a cache directory named after a hash of their inputs (kernel image,
modules, busybox, this file and the guest's init), written atomically: the first run pays about
two seconds, the others nothing. The kernel is stored as an uncompressed ELF ``vmlinux`` when the
image is xz- or gzip-compressed (the standard library can decompress both): qemu then boots it
through its PVH entry point, which saves the in-guest decompression (seconds under TCG).
"""

from __future__ import annotations

import os
import stat
import sys

from pysandboxes.errors import ProviderUnavailableError

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

#: The modules the guest asks for; their dependencies are added from ``.modinfo``. The microvm
#: machine has virtio-mmio devices only: no virtio-pci (3 modules fewer to load at each boot).
WANTED_MODULES = ("virtio_mmio", "virtio_console", "9pnet_virtio", "9p")
NET_MODULES = ("virtio_net",)
#: Where ``scripts/setup.sh`` unpacks the Debian kernel package (system-wide, then per user).
SETUP_DIRS = ("/var/cache/python-sb/qemu-kernel", "~/.cache/python-sb/qemu-kernel")
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox", "/usr/lib/initramfs-tools/bin/busybox")
INSTALL_HINT = (
    "apt-get install --no-install-recommends qemu-system-x86 busybox-static, and a guest "
    "kernel: scripts/setup.sh unpacks Debian's linux-image-amd64 into "
    "/var/cache/python-sb/qemu-kernel (or set qemu.kernel=/path/to/vmlinuz)"
)

#: The initramfs's /init. It loads the modules, opens the ``pysb`` port, asks the host for the
#: run's parameters (a ``P`` frame: ``P`` and a zero length) and reads them as one line: the
#: interpreter and the package's source directory. That line is the first thing a VM restored
#: from a saved state (``_qemu_state``) receives: the state is taken while ``/init`` waits in that
#: ``read``, after the kernel's boot and the module loads and before the 9p mount, so nothing
#: per-run is on the kernel command line or in the state. The guest's PID 1 needs three modules
#: of the package (``_qemu_guest``, ``_qemu_frames``, ``_ns_init``, which import only built-in
#: modules): the two packages above them are entered as bare namespaces, without running their
#: ``__init__`` files (their imports cost a tenth of a second under TCG and are of no use there).
INIT_SCRIPT = r"""#!/bin/busybox sh
B=/bin/busybox
fail() { echo "python-sb guest: $*" >&2; $B sync; $B reboot -f; }
$B mount -t devtmpfs dev /dev || fail "devtmpfs"
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
for m in $($B cat /modules); do $B insmod /lib/modules/$m.ko || fail "insmod $m"; done
port=
for p in /sys/class/virtio-ports/*; do
  [ "$($B cat $p/name 2>/dev/null)" = pysb ] && port=/dev/${p##*/}
done
[ -n "$port" ] || fail "no pysb port"
$B ip link set lo up
if [ -e /sys/class/net/eth0 ]; then
  $B ip link set eth0 up && $B ip addr add 10.0.2.15/24 dev eth0 &&
    $B ip route add default via 10.0.2.2 || fail "network"
fi
$B umount /sys
$B umount /proc
exec 3<>"$port"
$B printf 'P\000\000\000\000' >&3
read -r pysb_python pysb_src <&3 || fail "no parameters from the host"
$B mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,access=any \
  pysbroot /newroot || fail "cannot mount the shared tree"
$B umount -l /dev
code="import sys; p = '$pysb_src/pysandboxes'; m = type(sys)"
code="$code; t = sys.modules['pysandboxes'] = m('pysandboxes'); t.__path__ = [p]"
code="$code; q = sys.modules['pysandboxes.providers'] = m('pysandboxes.providers')"
code="$code; q.__path__ = [p + '/providers']"
code="$code; from pysandboxes.providers._qemu_guest import main; main(3)"
exec $B switch_root /newroot "$pysb_python" -I -S -c "$code"
"""


# -- finding a kernel -----------------------------------------------------------------------------


class Kernel:
    """A kernel image and the directory of its modules."""

    __slots__ = ("image", "modules", "version")

    def __init__(self, image: str, modules: str, version: str) -> None:
        self.image = image
        self.modules = modules
        self.version = version

    def __repr__(self) -> str:
        return f"Kernel({self.image!r}, {self.modules!r})"


def _version_of(image: str) -> str:
    name = os.path.basename(image)
    for prefix in ("vmlinuz-", "vmlinux-", "bzImage-"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return ""


def _version_key(version: str) -> list[int]:
    out = []
    for part in version.replace("-", ".").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return out


def modules_dir_for(image: str, version: str) -> str:
    """``<root>/lib/modules/<version>`` for an image in ``<root>/boot`` (an unpacked package),
    else ``/lib/modules/<version>``."""

    boot = os.path.dirname(os.path.abspath(image))
    if os.path.basename(boot) == "boot":
        candidate = os.path.join(os.path.dirname(boot), "lib", "modules", version)
        if os.path.isdir(candidate):
            return candidate
    return os.path.join("/lib/modules", version)


def usable(kernel: Kernel) -> str:
    """Why ``kernel`` cannot boot the guest ('' when it can)."""

    if not os.access(kernel.image, os.R_OK):
        return f"{kernel.image} is not readable"
    if not os.path.isdir(kernel.modules):
        return f"{kernel.image}: no modules directory {kernel.modules}"
    try:
        index = module_index(kernel.modules)
        resolve_modules(kernel.modules, WANTED_MODULES, index)
    except ProviderUnavailableError as exc:
        return str(exc)
    return ""


def find_kernel(explicit: str | None = None, home: str | None = None) -> Kernel:
    """The guest kernel: ``explicit`` (``qemu.kernel=``), else the running kernel's image, else
    one unpacked by the set-up step, else the newest in /boot; ``ProviderUnavailableError``
    with every reason when none fits."""

    if explicit:
        version = _version_of(explicit)
        kernel = Kernel(explicit, modules_dir_for(explicit, version), version)
        problem = (
            f"qemu.kernel={explicit}: no such file"
            if not os.path.exists(explicit)
            else usable(kernel)
            if version
            else (
                f"qemu.kernel={explicit}: cannot tell its version from the name "
                "(expected vmlinuz-VERSION, with modules in <root>/lib/modules/VERSION)"
            )
        )
        if problem:
            raise ProviderUnavailableError(f"os-sandbox=qemu: {problem}")
        return kernel
    candidates: list[str] = [f"/boot/vmlinuz-{os.uname().release}"]
    home = home if home is not None else os.path.expanduser("~")
    for folder in SETUP_DIRS:
        boot = os.path.join(folder.replace("~", home, 1), "boot")
        candidates += sorted(
            (os.path.join(boot, n) for n in _listdir(boot) if n.startswith("vmlinuz-")),
            key=lambda p: _version_key(_version_of(p)),
            reverse=True,
        )
    candidates += sorted(
        (os.path.join("/boot", n) for n in _listdir("/boot") if n.startswith("vmlinuz-")),
        key=lambda p: _version_key(_version_of(p)),
        reverse=True,
    )
    problems: list[str] = []
    for image in dict.fromkeys(candidates):
        if not os.path.exists(image):
            continue
        version = _version_of(image)
        kernel = Kernel(image, modules_dir_for(image, version), version)
        problem = usable(kernel)
        if not problem:
            return kernel
        problems.append(problem)
    detail = "; ".join(problems) if problems else "no kernel image found"
    raise ProviderUnavailableError(f"os-sandbox=qemu needs a guest kernel ({detail})")


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def find_busybox() -> str | None:
    """A statically linked busybox (the initramfs has no libraries)."""

    for path in BUSYBOX_CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.R_OK) and is_static_elf(path):
            return path
    return None


def is_static_elf(path: str) -> bool:
    """Whether ``path`` is an ELF executable without a program interpreter (PT_INTERP)."""

    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only
                return False
            phoff = int.from_bytes(head[32:40], "little")
            phentsize = int.from_bytes(head[54:56], "little")
            phnum = int.from_bytes(head[56:58], "little")
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
    except OSError:
        return False
    for i in range(phnum):
        if int.from_bytes(table[i * phentsize : i * phentsize + 4], "little") == 3:  # PT_INTERP
            return False
    return True


# -- modules --------------------------------------------------------------------------------------


def module_index(modules_dir: str) -> dict[str, str]:
    """Module name (``-`` written ``_``) -> path of its file, for every module below
    ``modules_dir/kernel``; built-in modules map to ``''``."""

    index: dict[str, str] = {}
    try:
        with open(os.path.join(modules_dir, "modules.builtin"), encoding="utf-8") as handle:
            for line in handle:
                index[_module_name(line.strip())] = ""
    except OSError:
        pass
    for folder, _dirs, files in os.walk(os.path.join(modules_dir, "kernel")):
        for name in files:
            if ".ko" in name:
                index.setdefault(_module_name(name), os.path.join(folder, name))
    return index


def _module_name(path: str) -> str:
    name = os.path.basename(path)
    return name.split(".ko", 1)[0].replace("-", "_")


def read_module(path: str) -> bytes:
    """The module's ELF bytes (``.ko.xz`` and ``.ko.gz`` decompressed; ``.ko.zst`` refused)."""

    with open(path, "rb") as handle:
        data = handle.read()
    if path.endswith(".xz"):
        import lzma

        return lzma.decompress(data)
    if path.endswith(".gz"):
        import gzip

        return gzip.decompress(data)
    if path.endswith(".zst"):
        raise ProviderUnavailableError(
            f"os-sandbox=qemu: {path} is zstd-compressed; Python's standard library cannot "
            "decompress it (use a kernel whose modules are plain, xz or gzip)"
        )
    return data


def modinfo(elf: bytes) -> dict[str, list[str]]:
    """The ``.modinfo`` section of a 64-bit little-endian ELF module: key -> values."""

    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff = int.from_bytes(elf[40:48], "little")
    shentsize = int.from_bytes(elf[58:60], "little")
    shnum = int.from_bytes(elf[60:62], "little")
    shstrndx = int.from_bytes(elf[62:64], "little")

    def section(index: int) -> tuple[int, int, int]:
        base = shoff + index * shentsize
        name = int.from_bytes(elf[base : base + 4], "little")
        offset = int.from_bytes(elf[base + 24 : base + 32], "little")
        size = int.from_bytes(elf[base + 32 : base + 40], "little")
        return name, offset, size

    _, str_offset, _ = section(shstrndx)
    for index in range(shnum):
        name, offset, size = section(index)
        end = elf.index(b"\0", str_offset + name)
        if elf[str_offset + name : end] == b".modinfo":
            info: dict[str, list[str]] = {}
            for item in elf[offset : offset + size].split(b"\0"):
                key, sep, value = item.decode("utf-8", "replace").partition("=")
                if sep:
                    info.setdefault(key, []).append(value)
            return info
    return {}


def resolve_modules(
    modules_dir: str, wanted: Iterable[str], index: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """``(name, path)`` of every module to load for ``wanted``, dependencies first; built-in
    ones are left out. ``ProviderUnavailableError`` for a module the kernel lacks."""

    if index is None:
        index = module_index(modules_dir)
    order: list[tuple[str, str]] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        key = name.replace("-", "_")
        if key in seen:
            return
        if key in chain:
            raise ProviderUnavailableError(f"os-sandbox=qemu: module dependency loop at {key}")
        if key not in index:
            raise ProviderUnavailableError(
                f"os-sandbox=qemu: the guest kernel in {modules_dir} has no module {key} "
                "(9p, virtio-serial and virtio-pci/mmio are needed)"
            )
        path = index[key]
        if path:
            for dep in modinfo(read_module(path)).get("depends", [""])[0].split(","):
                if dep:
                    visit(dep, (*chain, key))
        seen.add(key)
        if path:
            order.append((key, path))

    for name in wanted:
        visit(name, ())
    return order


# -- the vmlinux ----------------------------------------------------------------------------------

XZ_MAGIC = b"\xfd7zXZ\x00"
GZIP_MAGIC = b"\x1f\x8b\x08\x00"


def extract_vmlinux(image: bytes) -> bytes | None:
    """The uncompressed ELF kernel inside a bzImage (xz or gzip payload), or None when there is
    none the standard library can decompress (the image is then booted as it is)."""

    if image[:4] == b"\x7fELF":
        return image
    for magic, kind in ((XZ_MAGIC, "xz"), (GZIP_MAGIC, "gzip")):
        start = image.find(magic)
        while start != -1:
            try:
                if kind == "xz":
                    import lzma

                    out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(image[start:])
                else:
                    import zlib

                    out = zlib.decompressobj(wbits=31).decompress(image[start:])
            except Exception:
                out = b""
            if out[:4] == b"\x7fELF":
                return out
            start = image.find(magic, start + 1)
    return None


def has_pvh_note(elf: bytes) -> bool:
    """Whether an ELF kernel carries the Xen PVH entry note qemu's ``-kernel`` needs to boot an
    uncompressed ELF (type 18, XEN_ELFNOTE_PHYS32_ENTRY, owner "Xen")."""

    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    phoff = int.from_bytes(elf[32:40], "little")
    phentsize = int.from_bytes(elf[54:56], "little")
    phnum = int.from_bytes(elf[56:58], "little")
    for i in range(phnum):
        base = phoff + i * phentsize
        if int.from_bytes(elf[base : base + 4], "little") != 4:  # PT_NOTE
            continue
        offset = int.from_bytes(elf[base + 8 : base + 16], "little")
        size = int.from_bytes(elf[base + 32 : base + 40], "little")
        pos, end = offset, offset + size
        while pos + 12 <= end:
            namesz = int.from_bytes(elf[pos : pos + 4], "little")
            descsz = int.from_bytes(elf[pos + 4 : pos + 8], "little")
            kind = int.from_bytes(elf[pos + 8 : pos + 12], "little")
            name = elf[pos + 12 : pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and kind == 18:
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


# -- cpio (newc) ----------------------------------------------------------------------------------


class Cpio:
    """An initramfs archive in the ``newc`` format the kernel unpacks (uncompressed)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._ino = 1

    def _entry(
        self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)
    ) -> None:
        encoded = name.encode() + b"\0"
        fields = (
            self._ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0,
        )  # fmt: skip
        header = b"070701" + b"".join(b"%08X" % value for value in fields)
        self._ino += 1
        part = header + encoded
        part += b"\0" * (-len(part) % 4)
        part += data + b"\0" * (-len(data) % 4)
        self._parts.append(part)

    def directory(self, name: str, mode: int = 0o755) -> None:
        self._entry(name, stat.S_IFDIR | mode)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def char_device(self, name: str, major: int, minor: int, mode: int = 0o600) -> None:
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        data = b"".join(self._parts)
        return data + b"\0" * (-len(data) % 512)


def parse_cpio(data: bytes) -> dict[str, tuple[int, bytes]]:
    """Name -> (mode, data) of a ``newc`` archive (for tests and diagnostics)."""

    out: dict[str, tuple[int, bytes]] = {}
    pos = 0
    while True:
        if data[pos : pos + 6] != b"070701":
            raise ValueError(f"bad cpio header at {pos}")
        fields = [int(data[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name_start = pos + 110
        name = data[name_start : name_start + namesize - 1].decode()
        body = name_start + namesize
        body += -body % 4
        if name == "TRAILER!!!":
            return out
        out[name] = (mode, data[body : body + size])
        pos = body + size
        pos += -pos % 4


def build_initrd(busybox: str, modules: list[tuple[str, str]]) -> bytes:
    """The initramfs: busybox, the modules in load order (listed in ``/modules``), ``/init``."""

    archive = Cpio()
    for folder in ("bin", "dev", "proc", "sys", "newroot", "lib", "lib/modules"):
        archive.directory(folder)
    archive.char_device("dev/console", 5, 1)
    archive.char_device("dev/null", 1, 3, 0o666)
    with open(busybox, "rb") as handle:
        archive.file("bin/busybox", handle.read(), 0o755)
    archive.symlink("bin/sh", "busybox")
    for name, path in modules:
        archive.file(f"lib/modules/{name}.ko", read_module(path))
    archive.file("modules", " ".join(name for name, _ in modules).encode() + b"\n")
    archive.file("init", INIT_SCRIPT.encode(), 0o755)
    return archive.finish()


# -- the cache ------------------------------------------------------------------------------------


#: The cache of root (a system-wide directory root may write).
SYSTEM_CACHE = "/var/cache/python-sb/qemu"


def cache_root(home: str | None = None) -> str:
    """Where the built kernel and initramfs go: ``/var/cache/python-sb/qemu`` for root,
    ``$XDG_CACHE_HOME/python-sb/qemu`` (``~/.cache``) for everyone else."""

    if os.geteuid() == 0:
        return SYSTEM_CACHE
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        home if home is not None else os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "python-sb", "qemu")


def _fingerprint(paths: Iterable[str]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for path in paths:
        try:
            info = os.stat(path)
            digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
        except OSError:
            digest.update(f"{path}\0missing\0".encode())
    with open(__file__, "rb") as handle:
        digest.update(handle.read())
    return digest.hexdigest()[:20]


class Artefacts:
    """What qemu boots: ``kernel`` (a vmlinux or the original image) and ``initrd``."""

    __slots__ = ("initrd", "kernel", "pvh")

    def __init__(self, kernel: str, initrd: str, pvh: bool) -> None:
        self.kernel = kernel
        self.initrd = initrd
        self.pvh = pvh


def _write_atomically(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def prepare_artefacts(
    kernel: Kernel,
    busybox: str,
    *,
    network: bool,
    cache: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Artefacts:
    """The cached vmlinux and initramfs for ``kernel`` (built now if missing). ``network`` adds
    virtio-net to the modules (a separate initramfs). ``progress(text)`` is told of each step
    that builds something (seconds of decompression on a first run), never of a cache hit."""

    index_paths = [kernel.image, kernel.modules, busybox]
    key = _fingerprint(index_paths)
    folder = os.path.join(cache or cache_root(), key)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    initrd = os.path.join(folder, "initrd-net.cpio" if network else "initrd.cpio")
    vmlinux = os.path.join(folder, "vmlinux")
    plain = os.path.join(folder, "image-is-not-extractable")
    if not os.path.exists(initrd):
        if progress is not None:
            progress(f"building the guest's initramfs into {folder} (once)")
        wanted = WANTED_MODULES + (NET_MODULES if network else ())
        modules = resolve_modules(kernel.modules, wanted)
        _write_atomically(initrd, build_initrd(busybox, modules))
    if os.path.exists(vmlinux):
        return Artefacts(vmlinux, initrd, True)
    if os.path.exists(plain):
        return Artefacts(kernel.image, initrd, False)
    if progress is not None:
        progress(f"extracting the guest kernel {kernel.image} into {folder} (once)")
    with open(kernel.image, "rb") as handle:
        image = handle.read()
    elf = extract_vmlinux(image)
    if elf is not None and has_pvh_note(elf):
        _write_atomically(vmlinux, elf)
        return Artefacts(vmlinux, initrd, True)
    _write_atomically(plain, b"")
    return Artefacts(kernel.image, initrd, False)
