#!/usr/bin/env bash
# Build python-sb's container image from Debian packages, without an image registry:
#   1. a minimal Debian (bookworm) with python3 and the tools of the namespace providers, made
#      by mmdebstrap and imported with `podman import` as localhost/python-sb-base:bookworm
#      (the root file system tar is cached in ~/.cache/pysandboxes/images, keyed by its package
#      list, so a second build is quick);
#   2. containers/Containerfile on top: the package from src/ and /usr/bin/python-sb,
#      tagged localhost/python-sb:dev (or $PYSANDBOXES_IMAGE).
# The base also holds python3-pytest, so that the test suite can run the hostile corpus inside
# the container (tests/containers). Needs podman and mmdebstrap (scripts/setup.sh installs them
# as root). Extra podman options for this machine go in CONTAINERS_CONF (tests/containers).
# Usage: scripts/container-image.sh [--print-base]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=python3,python3-pytest,python3-pytest-timeout,bubblewrap,passt,nftables,iproute2,ca-certificates
SUITE=bookworm
BASE_TAG=localhost/python-sb-base:$SUITE
IMAGE=${PYSANDBOXES_IMAGE:-localhost/python-sb:dev}
key=$(printf '%s %s 1' "$SUITE" "$PACKAGES" | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pysandboxes/images
tarball=$cache/base-$SUITE-$key.tar

if [ "${1:-}" = "--print-base" ]; then
  echo "$tarball"
  exit 0
fi
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "container-image.sh: $tool not found (apt-get install $tool)" >&2; exit 2; }
done
if [ ! -s "$tarball" ]; then
  mkdir -p "$cache"
  echo "container-image.sh: building the base with mmdebstrap ($SUITE: $PACKAGES), a few minutes"
  mmdebstrap --quiet --format=tar --variant=apt --include="$PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$SUITE" "$tarball.part"
  mv "$tarball.part" "$tarball"
fi
label=python-sb.base-key=$key
if [ "$(podman image inspect --format '{{index .Labels "python-sb.base-key"}}' "$BASE_TAG" 2>/dev/null || true)" != "$key" ]; then
  podman import --change "LABEL $label" --change 'CMD ["/bin/sh"]' -q "$tarball" "$BASE_TAG" >/dev/null
fi
podman build -q --build-arg BASE="$BASE_TAG" -f containers/Containerfile -t "$IMAGE" . >/dev/null
echo "$IMAGE"
