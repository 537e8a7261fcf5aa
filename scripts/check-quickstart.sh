#!/usr/bin/env bash
# Runs the README's quick start, as written, against a freshly started `herald serve`
# (embedded PostgreSQL, own data directory, a free port), and fails if any request does.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin_dir="$(cd "$root" && swift build --show-bin-path)"
work="$(mktemp -d /tmp/herald-quickstart.XXXXXX)"
chmod 755 "$work"
source "$root/scripts/lib/herald-serve.sh"

cleanup() {
    herald_stop
    rm -rf "$work"
}
trap cleanup EXIT

cd "$work"
# The quick start runs at the repository root: give it the build products there.
ln -s "$root/.build" "$work/.build"
herald_serve "$bin_dir"
port="$HERALD_PORT"
inspect_port="$HERALD_INSPECT_PORT"

# The block between the quickstart markers, with the README's port replaced by ours.
sed -n '/<!-- quickstart -->/,/<!-- \/quickstart -->/p' "$root/README.md" \
    | sed -n '/^```sh$/,/^```$/p' | grep -v '^```' \
    | sed "s|http://127.0.0.1:8080|http://127.0.0.1:$port|; s|http://127.0.0.1:2198|http://127.0.0.1:$inspect_port|" > quickstart.sh
[ -s quickstart.sh ] || { echo "no quick start found in README.md" >&2; exit 1; }

# Every request must succeed: curl fails on HTTP errors here (showing the error body).
output="$(bash -c 'set -euo pipefail; curl() { command curl --fail-with-body "$@"; }; source ./quickstart.sh' 2>&1)" || {
    echo "$output" >&2
    echo "README quick start failed" >&2
    exit 1
}
echo "$output" | grep -q '"result":true' || { echo "$output" >&2; echo "quick start did not show the tag membership" >&2; exit 1; }
echo "$output" | grep -q '"apns_sent":1' || { echo "$output" >&2; echo "quick start did not show the APNs delivery" >&2; exit 1; }
echo "$output" | grep -q '"title":"Hello"' || { echo "$output" >&2; echo "quick start did not show the sandbox's notification" >&2; exit 1; }
echo "README quick start: ok ($(grep -c '^curl' quickstart.sh) curl requests, $(grep -c 'heraldctl ' quickstart.sh) heraldctl commands)"
