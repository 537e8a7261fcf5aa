#!/usr/bin/env bash
# Runs JPush's official Python client (PyPI `jpush`, the version pinned below, unchanged)
# against a freshly started `herald serve` (embedded PostgreSQL, free ports): an app made
# with JPush-shaped credentials, an iOS device (APNs token) and an Android device imported
# from a JPush-style file, and an Android device connected over MQTT (`herald-device`).
# scripts/jpush_client/check.py makes the calls an operator's code makes and asserts each
# answer; it prints one line per call, `KNOWN GAP` where Herald answers differently from
# JPush today, and a summary. Exits non-zero on any failed assertion.
#
# The client goes into the private environment .build-test-venv, the one
# scripts/install-deps.sh --test makes for schemathesis (PyPI only).
# Uses the built binaries (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin_dir="${HERALD_BIN_DIR:-$(cd "$root" && swift build --show-bin-path)}"
jpush_version=3.4.1

# Pinned: the check asserts what this version sends. pip needs no network once it is in.
venv="$root/.build-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "jpush==$jpush_version"

work="$(mktemp -d /tmp/herald-jpush-client.XXXXXX)"
chmod 755 "$work"
source "$root/scripts/lib/herald-serve.sh"
device_pid=""
cleanup() {
    if [ -n "$device_pid" ]; then
        kill "$device_pid" 2> /dev/null || true
        wait "$device_pid" 2> /dev/null || true
    fi
    herald_stop
    rm -rf "$work"
}
trap cleanup EXIT

cd "$work"
herald_serve "$bin_dir"
export HERALD_URL="http://127.0.0.1:$HERALD_PORT"
export HERALD_ADMIN_TOKEN
HERALD_ADMIN_TOKEN="$(cat .herald/admin-token)"
heraldctl() { HOME="$work" "$bin_dir/heraldctl" "$@"; }

# The app, with credentials of JPush's shape (24 lowercase hex characters each).
hex() { python3 -c "import secrets; print(secrets.token_hex($1))"; }
export JPUSH_APP_KEY JPUSH_MASTER_SECRET
JPUSH_APP_KEY="$(hex 12)"
JPUSH_MASTER_SECRET="$(hex 12)"
heraldctl apps create "JPush client check" --jpush-app-key "$JPUSH_APP_KEY" > app.out

# Devices as a JPush customer exports them: an iOS device with its APNs token, an
# Android device JPush reached over its own connection (never connects here).
export IOS_RID=191e35f7e0a6b4c2d81 IMPORTED_ANDROID_RID=0900e8d85ef
export IOS_APNS_TOKEN=5e5c9b7f3c1d4a0e8b2f6d7c9a1b3e5f7c9d1b3a5e7f9c1d3b5a7e9f1c3d5b7a
cat > devices.ndjson << EOF
{"registration_id": "$IOS_RID", "platform": "ios", "apns_token": "$IOS_APNS_TOKEN", "alias": "ios-alice", "tags": ["vip", "beijing", "ios-only"]}
{"registration_id": "$IMPORTED_ANDROID_RID", "platform": "android", "alias": "old-bob", "tags": ["beijing"], "mobile": "13800138000"}
EOF
heraldctl devices import devices.ndjson --app "$JPUSH_APP_KEY" > import.out
grep -Eq '^created +2$' import.out || { cat import.out >&2; echo "the import did not create both devices" >&2; exit 1; }

# An Android device on the SDK, connected over MQTT; it prints what it receives.
export ANDROID_EVENTS="$work/android.events"
"$bin_dir/herald-device" --api "$HERALD_URL" --port "$HERALD_MQTT_PORT" --app-key "$JPUSH_APP_KEY" \
    --platform android --alias droid-carol --tag vip --tag shanghai --state "$work/android.json" \
    > "$ANDROID_EVENTS" 2> android.err &
device_pid=$!
for _ in $(seq 1 60); do
    grep -q '^connected$' "$ANDROID_EVENTS" && break
    kill -0 "$device_pid" 2> /dev/null || break
    sleep 0.5
done
grep -q '^connected$' "$ANDROID_EVENTS" || { cat "$ANDROID_EVENTS" android.err >&2; echo "herald-device did not connect" >&2; exit 1; }
export ANDROID_RID
ANDROID_RID="$(sed -n 's/^registration_id //p' "$ANDROID_EVENTS")"
export APNS_SANDBOX_URL="http://127.0.0.1:$HERALD_INSPECT_PORT"

status=0
"$venv/bin/python" "$root/scripts/jpush_client/check.py" || status=$?
if [ "$status" -ne 0 ]; then
    echo "--- the server's log (last 40 lines of stderr)" >&2
    tail -n 40 server.err >&2
fi
exit "$status"
