#!/usr/bin/env bash
# The web console in a real browser: Debian's Chromium, driven by Selenium (PyPI, pinned,
# in .build-test-venv; Selenium Manager kept offline: the driver is Debian's chromedriver),
# against a freshly started `herald serve` (embedded PostgreSQL, free ports). A person is
# made with heraldctl, with a role on one app of two; scripts/console_browser/check.py
# signs in with the keyboard alone, checks what the pages show and refuse, at a phone's
# width and in dark mode, that the browser reported no Content-Security-Policy violation,
# and signs out. An instance admin then creates an app, uploads a .p8, sends to a device
# connected over MQTT (herald-device) and watches the funnel reach "acknowledged", recalls
# it, sends to the test devices only, and is refused a deletion without the password and
# a forged form. The main pages' screenshots are kept in .build/console-screenshots, and
# the dashboard's and the composer's weight and first paint are printed.
# Exits non-zero on any failed check.
# Uses the built binaries (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin_dir="${HERALD_BIN_DIR:-$(cd "$root" && swift build --show-bin-path)}"
selenium_version=4.50.0

chromium="$(command -v chromium || true)"
driver="$(command -v chromedriver || true)"
if [ -z "$chromium" ] || [ -z "$driver" ]; then
    echo "error: chromium and chromedriver are needed (scripts/install-deps.sh --test installs Debian's chromium and chromium-driver)" >&2
    exit 1
fi
venv="$root/.build-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "selenium==$selenium_version"

work="$(mktemp -d /tmp/herald-console.XXXXXX)"
chmod 755 "$work"
source "$root/scripts/lib/herald-serve.sh"
cleanup() {
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

export CONSOLE_APP_KEY CONSOLE_OTHER_APP_KEY CONSOLE_EMAIL=console-check@example.com CONSOLE_PASSWORD="a long console password"
CONSOLE_APP_KEY="$(heraldctl apps create "Console <check> & co" | sed -n 's/^app_key *//p')"
CONSOLE_OTHER_APP_KEY="$(heraldctl apps create "Not theirs" | sed -n 's/^app_key *//p')"
[ -n "$CONSOLE_APP_KEY" ] && [ -n "$CONSOLE_OTHER_APP_KEY" ] || { echo "could not create the apps" >&2; exit 1; }
echo "$CONSOLE_PASSWORD" | heraldctl users create "$CONSOLE_EMAIL" --password-stdin > /dev/null
heraldctl users role "$CONSOLE_EMAIL" --app "$CONSOLE_APP_KEY" operator > /dev/null
# An instance admin, who makes an app in the browser and runs a device's push through it.
export CONSOLE_ADMIN_EMAIL=console-admin@example.com
echo "$CONSOLE_PASSWORD" | heraldctl users create "$CONSOLE_ADMIN_EMAIL" --password-stdin --instance-role admin > /dev/null
# An APNs token key (.p8) to upload, as Apple gives one: PKCS#8, P-256.
export CONSOLE_P8="$work/AuthKey_CHECK12345.p8"
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$CONSOLE_P8"
# A Firebase service account's key file to upload, as Firebase's console gives one: an RSA key
# (PKCS#8) in JSON with the account's fields.
export CONSOLE_FCM_KEY="$work/browser-shop-firebase-adminsdk.json"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/fcm.pem" 2> /dev/null
python3 - "$work/fcm.pem" "$CONSOLE_FCM_KEY" << 'PY'
import json, sys
key = open(sys.argv[1]).read()
json.dump({"type": "service_account", "project_id": "browser-shop", "private_key_id": "0123456789abcdef0123456789abcdef01234567",
           "private_key": key, "client_email": "firebase-adminsdk-check@browser-shop.iam.gserviceaccount.com",
           "client_id": "100000000000000000001", "token_uri": "https://oauth2.googleapis.com/token"}, open(sys.argv[2], "w"))
PY
export HERALD_DEVICE="$bin_dir/herald-device" HERALD_MQTT_PORT CONSOLE_WORK="$work"
# Screenshots of the main pages, kept after the run.
export CONSOLE_SCREENSHOTS="$root/.build/console-screenshots"
mkdir -p "$CONSOLE_SCREENSHOTS"

export CHROMIUM="$chromium" CHROMEDRIVER="$driver" SE_OFFLINE=true
status=0
"$venv/bin/python" "$root/scripts/console_browser/check.py" || status=$?
if [ "$status" -ne 0 ]; then
    echo "--- server.err (tail)" >&2
    tail -n 40 server.err >&2 || true
fi
exit "$status"
