#!/usr/bin/env bash
# Set up everything python-sb and its tests need, idempotently:
#   - as root on Debian/Ubuntu: the system tools the kernel providers use (bubblewrap, nftables,
#     passt/pasta, slirp4netns, iproute2; qemu and a static busybox for os-sandbox=qemu);
#   - the guest kernel of os-sandbox=qemu: Debian's linux-image-amd64 package downloaded with
#     apt-get and unpacked with dpkg-deb into /var/cache/python-sb/qemu-kernel (root) or
#     ~/.cache/python-sb/qemu-kernel, never installed as the host's kernel (--no-qemu skips it);
#   - a virtual environment in .venv with python-sb installed (editable) and the dev tools.
# Usage: scripts/setup.sh [--no-system] [--no-dev] [--no-qemu]
set -euo pipefail
cd "$(dirname "$0")/.."

system=1 dev=1 qemu=1
for arg in "$@"; do
  case "$arg" in
    --no-system) system=0 ;;
    --no-dev) dev=0 ;;
    --no-qemu) qemu=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

PACKAGES=(bubblewrap nftables passt slirp4netns iproute2 util-linux)
if [ "$qemu" = 1 ]; then
  PACKAGES+=(qemu-system-x86 busybox-static)
fi
if [ "$system" = 1 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "setup: installing system packages: ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
      echo "setup: not root; install these for the kernel providers: sudo apt-get install ${missing[*]}" >&2
    fi
  fi
fi

# The guest kernel of os-sandbox=qemu: the package linux-image-amd64 depends on, downloaded and
# unpacked (vmlinuz + modules), not installed: the host keeps its own kernel and boot loader.
if [ "$system" = 1 ] && [ "$qemu" = 1 ] && command -v apt-get >/dev/null 2>&1 \
    && [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
  if [ "$(id -u)" = 0 ]; then kdir=/var/cache/python-sb/qemu-kernel; else kdir=$HOME/.cache/python-sb/qemu-kernel; fi
  if ! ls "$kdir"/boot/vmlinuz-* >/dev/null 2>&1; then
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
    if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
      apt-get update -qq
      pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
    fi
    if [ -n "$pkg" ]; then
      echo "setup: unpacking $pkg into $kdir (the guest kernel of os-sandbox=qemu)"
      dl=$(mktemp -d)
      chmod 0755 "$dl"  # apt's download user must be able to write there
      (cd "$dl" && apt-get download -qq "$pkg" 2>/dev/null)
      mkdir -p "$kdir"
      dpkg-deb -x "$dl"/"$pkg"_*.deb "$kdir"
      rm -rf "$dl"
    else
      echo "setup: cannot find the package linux-image-amd64 depends on; os-sandbox=qemu needs a guest kernel (qemu.kernel=)" >&2
    fi
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# A current pip writes a python-sb entry script that does not import re (older ones did: several
# milliseconds of every run's start-up).
.venv/bin/python -m pip install -q --disable-pip-version-check -U 'pip>=25'
if [ "$dev" = 1 ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e .
fi
