#!/usr/bin/env bash
# Set up everything python-sb and its tests need, idempotently:
#   - as root on Debian/Ubuntu: the system tools the kernel providers use (bubblewrap, nftables,
#     passt/pasta, slirp4netns, iproute2; qemu and a static busybox for os-sandbox=qemu);
#   - the guest kernel of os-sandbox=qemu: Debian's linux-image-amd64 package downloaded with
#     apt-get and unpacked with dpkg-deb into /var/cache/python-sb/qemu-kernel (root) or
#     ~/.cache/python-sb/qemu-kernel, never installed as the host's kernel (--no-qemu skips it);
#   - a virtual environment in .venv with python-sb installed (editable) and the dev tools;
#   - with the dev tools, one more virtual environment per other supported CPython, .venv-X.Y
#     (editable install and dev tools too), where scripts/test.sh runs the Python-layer suites.
# Usage: scripts/setup.sh [--no-system] [--no-dev] [--no-qemu] [--pythons="3.12 3.13"]
# The versions of the extra environments: --pythons, else PYSANDBOXES_PYTHONS, else "3.12 3.13"
# (the supported CPythons other than 3.11, see README.md);
# an empty list creates none. An interpreter is looked up as pythonX.Y on PATH, then in pyenv
# ($PYENV_ROOT or ~/.pyenv, versions/X.Y*). A missing one is skipped with a warning, and is an
# error under PYSANDBOXES_REQUIRE_ALL=1 (CI).
set -euo pipefail
cd "$(dirname "$0")/.."

system=1 dev=1 qemu=1
pythons=${PYSANDBOXES_PYTHONS-3.12 3.13}
for arg in "$@"; do
  case "$arg" in
    --no-system) system=0 ;;
    --no-dev) dev=0 ;;
    --pythons=*) pythons=${arg#--pythons=} ;;
    --no-qemu) qemu=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
pythons=${pythons//,/ }

PACKAGES=(bubblewrap nftables passt slirp4netns iproute2 util-linux)
# strace counts the system calls of the compiled path walk (tests/unit/guard/test_paths.py).
PACKAGES+=(strace)
# The C compiler that builds the audit hook's compiled accelerator when pip installs python-sb
# (setup.py, src/pysandboxes/guard/_accelerator.c; without it the install goes on and the guard
# runs its pure-Python code, which tests/unit/guard/test_accelerator.py fails under CI).
PACKAGES+=(gcc libc6-dev)
# The edge proxy's per-run certificate authority of secret= (issue 32) is made with openssl;
# its tests also run curl in the sandbox as a client that ignores the proxy variables.
PACKAGES+=(openssl curl)
# python-sb inside containers (tests/containers, issue 31): podman with Debian's runc (crun
# refuses these machines' cgroup v1 hybrid hierarchy), its pause helper, the tools of rootless
# podman, and mmdebstrap, which builds the image from Debian packages (no registry).
PACKAGES+=(podman runc catatonit uidmap fuse-overlayfs mmdebstrap)
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

# The unprivileged user of the rootless podman tests (subordinate ids come with useradd).
if [ "$system" = 1 ] && [ "$(id -u)" = 0 ] && command -v useradd >/dev/null 2>&1 \
    && ! id python-sb-rootless >/dev/null 2>&1; then
  useradd --create-home --shell /usr/sbin/nologin python-sb-rootless
fi
if [ "$system" = 1 ] && [ "$(id -u)" = 0 ] && id python-sb-rootless >/dev/null 2>&1 \
    && ! grep -q '^python-sb-rootless:' /etc/subuid 2>/dev/null; then
  usermod --add-subuids 200000-265535 --add-subgids 200000-265535 python-sb-rootless
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
  # The mcp SDK's 1.x series, beside the dev extra's 2.x, for the MCP integration's tests.
  [ -x .venv/mcp1/bin/python ] || examples/mcp-server/make-mcp1-venv.sh .venv/mcp1 >/dev/null
  # The agent frameworks of the samples in examples/agents/ (their tests skip without them).
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[agents]'
  # The sandboxed Jupyter kernel's tests (docs/kernel.md): ipykernel, jupyter_client, nbclient,
  # jupyter_server, matplotlib, pandas.
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[kernel]'
  # CrewAI pins openai 2.x (the OpenAI Agents SDK needs 3.x): its sample has its own venv.
  [ -x .venv/crewai/bin/python ] || examples/agents/crewai/make-venv.sh .venv/crewai >/dev/null
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e .
fi
# The start's modules as units (src/pysandboxes/launch/unit.py: the child's guard, the command
# line's launcher, landlock's), written afresh: a unit older than a source is never used (the
# imports then go the usual way), and this step is the one that rewrites them after an edit.
.venv/bin/python -m pysandboxes.launch.unit >/dev/null

# The coding agents whose own loaders check the hook files --install-hook writes
# (tests/e2e/test_hook_loaders.py: Claude Code's `claude doctor`, Codex's hook listing, Gemini
# CLI's settings loader), pinned, from the npm registry into a project-local folder. The tests
# skip without them, and fail under PYSANDBOXES_REQUIRE_ALL=1.
AGENTS_NPM=(@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @google/gemini-cli@0.61.0)
if [ "$dev" = 1 ]; then
  if ! command -v npm >/dev/null 2>&1 && [ "$system" = 1 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q nodejs npm >/dev/null
  fi
  if command -v npm >/dev/null 2>&1; then
    stamp=.venv/agents-npm/installed.txt
    if [ "$(cat "$stamp" 2>/dev/null)" != "${AGENTS_NPM[*]}" ]; then
      echo "setup: installing ${AGENTS_NPM[*]} into .venv/agents-npm"
      mkdir -p .venv/agents-npm
      npm install -s --prefix .venv/agents-npm --no-audit --no-fund --no-save "${AGENTS_NPM[@]}"
      echo "${AGENTS_NPM[*]}" > "$stamp"
    fi
  else
    echo "setup: npm not found: the coding agents' loader tests will not run" >&2
  fi
fi

# The real-world suite's projects (tests/realworld/sdists.txt): pinned source distributions from
# the package registry, downloaded once into a cache outside the repository. The tests unpack
# copies; a missing one is a skip, and a failure under PYSANDBOXES_REQUIRE_ALL=1.
if [ "$dev" = 1 ]; then
  cache=${PYSANDBOXES_SDIST_CACHE:-$HOME/.cache/pysandboxes/sdists}
  mkdir -p "$cache"
  while read -r pin; do
    pin=${pin%%#*}
    pin=${pin//[[:space:]]/}
    [ -n "$pin" ] || continue
    want="$(printf '%s' "${pin%%==*}-${pin##*==}" | tr 'A-Z_' 'a-z-').tar.gz"
    if ! ls "$cache" | tr 'A-Z_' 'a-z-' | grep -qxF "$want"; then
      echo "setup: fetching the sdist of $pin into $cache"
      .venv/bin/python -m pip download -q --disable-pip-version-check --no-binary :all: \
        --no-deps -d "$cache" "$pin"
    fi
  done < tests/realworld/sdists.txt
fi

# The other supported CPythons (README.md, pyproject.toml): one environment each.
python_is() {  # PATH X.Y: whether PATH runs and is CPython X.Y (a pyenv shim may name a
  # version that is not active, or not installed)
  [ -x "$1" ] && "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$2'.split('.'))))" 2>/dev/null
}
find_python() {  # X.Y -> the path of that interpreter, or nothing
  local version=$1 candidate newest=""
  candidate=$(command -v "python$version" 2>/dev/null || true)
  if [ -n "$candidate" ] && python_is "$candidate" "$version"; then
    echo "$candidate"
    return
  fi
  newest=$(
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version"; do
      if python_is "$candidate" "$version"; then echo "$candidate"; fi
    done | sort -V | tail -n 1
  )
  if [ -n "$newest" ]; then echo "$newest"; fi
}
if [ "$dev" = 1 ]; then
  for version in $pythons; do
    venv=".venv-$version"
    if [ ! -x "$venv/bin/python" ]; then
      interpreter=$(find_python "$version")
      if [ -z "$interpreter" ]; then
        message="setup: CPython $version not found (python$version on PATH, or pyenv install $version): the Python-layer suites will not run under it"
        if [ "${PYSANDBOXES_REQUIRE_ALL:-}" = 1 ]; then
          echo "$message (required for CI: PYSANDBOXES_REQUIRE_ALL=1)" >&2
          exit 1
        fi
        echo "$message" >&2
        continue
      fi
      "$interpreter" -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -U 'pip>=25'
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[dev]'
    "$venv/bin/python" -m pysandboxes.launch.unit >/dev/null
  done
fi
