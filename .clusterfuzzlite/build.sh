#!/bin/bash -eu
# ClusterFuzzLite build script (docs/fuzzing.md, "ClusterFuzzLite").
#
# Inside the builder image ($SRC and $OUT set by it, the checkout at
# $SRC/scopecheck) this builds the cargo-fuzz targets of fuzz/ with
# `cargo fuzz build -O --debug-assertions` (the image's nightly toolchain; AddressSanitizer,
# cargo-fuzz's default) and puts `lockstep` and `trace_parser` in $OUT, each
# with its seed corpus (fuzz/corpus/TARGET) as TARGET_seed_corpus.zip.
#
# The same script runs outside docker, and `.ci/run` runs it on every CI
# run: without $SRC/scopecheck the checkout is the one this file is in, OUT
# must be given, and FUZZ_BUILD_FLAGS replaces those flags (CI adds `-s none`:
# the stable toolchain has no -Zsanitizer).
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${SRC:-}" ] && [ -d "$SRC/scopecheck/fuzz" ]; then
  repo="$SRC/scopecheck"
fi
: "${OUT:?set OUT to the directory for the fuzz target binaries}"
flags="${FUZZ_BUILD_FLAGS:--O --debug-assertions}"
cd "$repo"
# The targets ClusterFuzzLite runs. lockstep_mutant is left out: it needs
# SCOPECHECK_MUTANT and exits without it, which ClusterFuzzLite's check of
# the build would count as a broken target.
targets="lockstep trace_parser"
# shellcheck disable=SC2086 # the flags are words
cargo fuzz build $flags
triple="$(rustc -vV | sed -n 's/^host: //p')"
for target in $targets; do
  cp "fuzz/target/$triple/release/$target" "$OUT/$target"
  rm -f "$OUT/${target}_seed_corpus.zip"
  if command -v zip >/dev/null 2>&1; then
    (cd "fuzz/corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  else
    (cd "fuzz/corpus/$target" && python3 -m zipfile -c "$OUT/${target}_seed_corpus.zip" ./*)
  fi
done
echo "built into $OUT: $targets"
