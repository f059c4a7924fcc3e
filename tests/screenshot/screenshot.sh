#!/usr/bin/env bash
# Render `scopecheck replay --html` for a trace and take a headless
# screenshot of the page, to look at it (docs/visual.md).
#
#   tests/screenshot/screenshot.sh [--mutant NAME] [--out PNG] [--size WxH] TRACE
#
# Writes the page next to the PNG (same name, .html) and prints both paths.
# Needs a Chromium; `cargo test` does not (tests/html_replay.rs checks the
# page structurally). The replay's exit code 1 (a divergence) is expected
# for a mutant and is not an error here.
set -euo pipefail

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mutant=""
out="${TMPDIR:-/tmp}/scopecheck-replay.png"
size="1400,1800"
trace=""
while [ $# -gt 0 ]; do
  case "$1" in
    --mutant) [ $# -ge 2 ] || usage; mutant="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out="$2"; shift 2 ;;
    --size) [ $# -ge 2 ] || usage; size="${2/x/,}"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) [ -z "$trace" ] || usage; trace="$1"; shift ;;
  esac
done
[ -n "$trace" ] || usage
[ -f "$trace" ] || { echo "no such trace: $trace" >&2; exit 2; }

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser="$candidate"
    break
  fi
done
if [ -z "$browser" ]; then
  cat >&2 <<'MSG'
No Chromium found (looked for chromium, chromium-browser, google-chrome).
On Debian or Ubuntu:  apt-get update && apt-get install -y chromium
The page itself needs no browser to be produced:
  cargo run -- replay --html OUT.html TRACE
MSG
  exit 1
fi

root="$(cd "$(dirname "$0")/../.." && pwd)"
trace="$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
page="${out%.png}.html"

args=(replay --html "$page" "$trace")
[ -z "$mutant" ] || args+=(--mutant "$mutant")
status=0
(cd "$root" && cargo run --quiet -- "${args[@]}") >/dev/null || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
  echo "scopecheck replay failed (exit $status)" >&2
  exit "$status"
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$out" --window-size="$size" \
  "file://$page" >/dev/null 2>&1
[ -s "$out" ] || { echo "$browser wrote no screenshot" >&2; exit 1; }
echo "page:       $page"
echo "screenshot: $out"
echo "browser:    $("$browser" --version 2>/dev/null || echo "$browser")"
