#!/usr/bin/env bash
# Set up everything python-sb and its tests need, idempotently:
#   - as root on Debian/Ubuntu: the system tools the kernel providers use (bubblewrap, nftables,
#     passt/pasta, slirp4netns, iproute2);
#   - a virtual environment in .venv with python-sb installed (editable) and the dev tools.
# Usage: scripts/setup.sh [--no-system] [--no-dev]
set -euo pipefail
cd "$(dirname "$0")/.."

system=1 dev=1
for arg in "$@"; do
  case "$arg" in
    --no-system) system=0 ;;
    --no-dev) dev=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

PACKAGES=(bubblewrap nftables passt slirp4netns iproute2 util-linux)
if [ "$system" = 1 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "setup: installing system packages: ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "setup: not root; install these for the kernel providers: sudo apt-get install ${missing[*]}" >&2
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
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e .
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
