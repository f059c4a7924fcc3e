#!/usr/bin/env bash
# Is the export unchanged? Writes the tests of both lines (`scopecheck export
# --out`, and `--list`) from this checkout's working tree and from REV
# (default HEAD, built in a scratch clone), and compares them byte for byte.
# A refactor of src/export/ (the split of render.rs by concept) must leave
# them the same. Exit 0: the same; 1: they differ (diff -r shows where).
#
#   scripts/export-unchanged.sh [REV]
#
# Each build and export runs under `timeout`; the scratch directory goes
# away on exit.
set -euo pipefail
rev=${1:-HEAD}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git clone -q "$root" "$tmp/base"
git -C "$tmp/base" checkout -q "$rev"

export_all() { # CHECKOUT OUT
    local bin="$1/target/release/scopecheck"
    (cd "$1" && timeout 1200 cargo build -q --release)
    for v in 20 26; do
        (cd "$1" && timeout 300 "$bin" export --out "$2/$v" --node-version "$v" >/dev/null 2>&1)
    done
    (cd "$1" && timeout 300 "$bin" export --list >"$2/list.md")
}

export_all "$tmp/base" "$tmp/before"
export_all "$root" "$tmp/after"
if diff -r "$tmp/before" "$tmp/after"; then
    echo "export unchanged against $rev: $(find "$tmp/after" -type f | wc -l) files"
else
    echo "export differs from $rev" >&2
    exit 1
fi
