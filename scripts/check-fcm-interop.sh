#!/usr/bin/env bash
# FCM's wire contract against implementations Herald didn't write (scripts/fcm_interop/check.py):
# the built `fcm-sandbox` is started on a free port with a service account's key file; `heraldctl
# fcm doctor` and `heraldctl fcm send` talk to it with HeraldFCM's client; then PyCA
# `cryptography` verifies the assertions Herald made, and google-auth (with httpx over HTTP/2)
# gets a token and sends a message, as an operator's own Python code would.
#
# The packages go into a private environment of their own, .build-fcm-venv (PyPI only), pinned
# (apart from schemathesis' and JPush's, whose pins of `requests` they would disturb).
# Uses the built binaries (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin_dir="${HERALD_BIN_DIR:-$(cd "$root" && swift build --show-bin-path)}"

venv="$root/.build-fcm-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check google-auth==2.40.3 requests==2.34.2 'httpx[http2]==0.28.1' cryptography==50.0.2

work="$(mktemp -d /tmp/herald-fcm-interop.XXXXXX)"
sandbox_pid=""
cleanup() {
    if [ -n "$sandbox_pid" ]; then
        kill "$sandbox_pid" 2> /dev/null || true
        wait "$sandbox_pid" 2> /dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin_dir/fcm-sandbox" --project herald-interop --key-file-out "$work/key.json" --certificate-out "$work/ca.pem" > "$work/sandbox.out" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 100); do
    grep -q "fcm-sandbox ready" "$work/sandbox.out" 2> /dev/null && break
    sleep 0.1
done
url="$(sed -n 's/.*fcm-sandbox ready port=[0-9]* url=\(.*\)$/\1/p' "$work/sandbox.out")"
[ -n "$url" ] || { cat "$work/sandbox.out"; echo "fcm-sandbox did not start" >&2; exit 1; }

"$bin_dir/heraldctl" fcm doctor --service-account "$work/key.json" --project herald-interop --server "$url" --ca-file "$work/ca.pem"
"$bin_dir/heraldctl" fcm send --service-account "$work/key.json" --server "$url" --ca-file "$work/ca.pem" \
    --token "dGVzdA:APA91bInterop$(printf 'x%.0s' $(seq 1 100))" --title "Hello" --body "from heraldctl" --data order=42
"$venv/bin/python" "$root/scripts/fcm_interop/check.py" "$url" "$work/key.json" "$work/ca.pem"
