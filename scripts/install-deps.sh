#!/usr/bin/env bash
# Installs the system packages Herald's run and test commands need, when they are missing:
# the PostgreSQL 15 server binaries (the embedded database); with --test, the mosquitto
# command-line clients (interoperability tests), python3-venv (for schemathesis, JPush's
# Python client and Selenium) and Chromium with its driver (the console's browser check); with --bench, the mosquitto broker and python3-venv (the peers
# the benchmarks measure against). Debian/Ubuntu (apt-get).
set -euo pipefail

missing=()
if ! ls /usr/lib/postgresql/*/bin/initdb > /dev/null 2>&1 && ! command -v initdb > /dev/null 2>&1; then
    missing+=(postgresql-15)
fi
# The console's assets are served gzipped (compress-nio links the system's zlib).
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
# Real MQTT clients nobody here wrote, for the gateway's interoperability tests.
if [ "${1:-}" = "--test" ] && ! command -v mosquitto_sub > /dev/null 2>&1; then
    missing+=(mosquitto-clients)
fi
# A real browser for the console's check (scripts/check-console.sh): Debian's Chromium and
# its driver (Selenium, from PyPI, goes into the venv below).
if [ "${1:-}" = "--test" ]; then
    command -v chromium > /dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver > /dev/null 2>&1 || missing+=(chromium-driver)
    # The console's browser check makes an APNs .p8 key to upload.
    command -v openssl > /dev/null 2>&1 || missing+=(openssl)
fi
# schemathesis (PyPI), which checks openapi.yaml against the server, goes into a private
# virtual environment below (.build-test-venv);
# check-deploy.sh and check-jpush-client.sh put their PyPI packages there too.
if [ "${1:-}" = "--test" ]; then
    python3 -c 'import venv, ensurepip' > /dev/null 2>&1 || missing+=(python3-venv)
fi
# The peers of the benchmarks: mosquitto (gateway) and a venv for aioapns (APNs).
if [ "${1:-}" = "--bench" ]; then
    command -v mosquitto > /dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing+=(mosquitto)
    python3 -c 'import venv' > /dev/null 2>&1 || missing+=(python3-venv)
fi
if ! command -v swift > /dev/null 2>&1; then
    echo "error: no Swift toolchain on PATH; install Swift 6.2 or newer (https://www.swift.org/install/)" >&2
    exit 1
fi
# Pinned, with the hypothesis it generates with: the test command's schemathesis run is
# deterministic, and the same cases on every machine need the same generator.
schemathesis_pins=(schemathesis==4.32.5 hypothesis==6.170.17)
install_schemathesis() {
    [ "${1:-}" = "--test" ] || return 0
    local venv
    venv="$(cd "$(dirname "$0")/.." && pwd)/.build-test-venv"
    if [ -x "$venv/bin/schemathesis" ] && "$venv/bin/pip" freeze 2> /dev/null | grep -qxF -e "${schemathesis_pins[0]}" \
        && "$venv/bin/pip" freeze 2> /dev/null | grep -qxF -e "${schemathesis_pins[1]}"; then
        return 0
    fi
    echo "==> installing ${schemathesis_pins[*]} into $venv"
    [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${schemathesis_pins[@]}"
}

if [ ${#missing[@]} -eq 0 ]; then
    install_schemathesis "${1:-}"
    exit 0
fi

if ! command -v apt-get > /dev/null 2>&1; then
    echo "error: missing ${missing[*]} and no apt-get to install it; install it with your package manager" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "==> installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
install_schemathesis "${1:-}"
