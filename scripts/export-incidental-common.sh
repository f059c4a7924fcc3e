#!/usr/bin/env bash
# Do the exported tests survive a test/common that does async work while it
# loads? Issue 54, point 2: Node's own test/common may take async ids and
# queue callbacks as it loads (a newer one reads globalThis.localStorage,
# whose warning queues a tick on Node 26), and a test must not depend on
# what ran before it started.
#
#   scripts/export-incidental-common.sh [SCRATCH]
#
# Runs `scopecheck export --prove --out SCRATCH` (default: a fresh temporary
# directory), then, for each line, puts three lines at the top of the
# stand-in test/common/index.js of its scratch tree (a process.nextTick, a
# setImmediate, a resolved promise's then) and runs every exported test
# again with its `// Flags:` (30 s each, output kept to 64 KiB), from its
# own directory. Prints each failure and the counts; exit 1 if any test
# fails. The binaries are --prove's: $SCOPECHECK_NODE (else `node`) and
# $SCOPECHECK_NODE26 (else the pinned one).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
scratch=${1:-$(mktemp -d)}
scopecheck="$root/target/release/scopecheck"
(cd "$root" && timeout 1200 cargo build -q --release)
mkdir -p "$scratch"
timeout 1200 "$scopecheck" export --prove --out "$scratch" --root "$root" >"$scratch/prove.log" 2>&1 || {
    echo "export --prove failed before the incidental work: $scratch/prove.log" >&2
    exit 2
}
node20=${SCOPECHECK_NODE:-node}
node26=${SCOPECHECK_NODE26:-$root/.node/26.12.1/bin/node}
failed=0
for line in v20 v26; do
    tree="$scratch/$line/tree"
    node=$node20
    [ "$line" = v26 ] && node=$node26
    common="$tree/test/common/index.js"
    python3 - "$common" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
work = ("// Incidental async work while test/common loads (scripts/export-incidental-common.sh).\n"
        "process.nextTick(() => {});\nsetImmediate(() => {});\nPromise.resolve().then(() => {});\n")
open(p, 'w').write(s.replace("'use strict';\n", "'use strict';\n" + work, 1))
PY
    pass=0
    fail=0
    while IFS= read -r test; do
        # An ES module test with a runner beside it runs through the runner.
        case $test in *.mjs) [ -f "$tree/${test%.mjs}.js" ] && continue ;; esac
        flags=$(head -1 "$tree/$test" | sed -n 's#^// Flags: ##p')
        # shellcheck disable=SC2086
        if out=$(cd "$tree/$(dirname "$test")" && timeout 30 "$node" $flags "$(basename "$test")" 2>&1 | head -c 65536); then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            echo "$line FAILED $test: $(printf '%s\n' "$out" | grep -m1 -E 'Error|check failed' | cut -c1-160)"
        fi
    done < <(cd "$tree" && find test \( -name 'test-*.js' -o -name 'test-*.mjs' \) ! -name '*-wrong-*' | sort)
    echo "$line ($("$node" --version)): $pass passed, $fail failed with incidental async work in test/common"
    failed=$((failed + fail))
done
[ "$failed" = 0 ]
