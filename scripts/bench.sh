#!/usr/bin/env bash
# Runs Herald's benchmarks in release mode, one at a time, each with its peer in the same
# run: the gateway against mosquitto (herald-bench gateway), the APNs provider against
# aioapns (herald-apns-bench), the push path end to end (herald-bench push), and three
# herald serve nodes against one (herald-bench cluster), the FCM channel against google-auth +
# httpx (herald-fcm-bench); on request, the message center's fan-out to APNs
# (herald-bench apns-fanout, no peer) and 100,000 idle connections over six nodes
# (herald-bench idle, no peer).
# Usage: scripts/bench.sh [gateway|apns|push|cluster|fcm|apns-fanout|idle ...]   (default: the first five)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench

# aioapns, the APNs peer, in a private virtual environment.
venv=.build-bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aioapns' 2> /dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q aioapns
fi
# google-auth and httpx, the FCM peer, pinned as the interop check has them.
fcm_venv=.build-fcm-venv
if [ ! -x "$fcm_venv/bin/python" ] || ! "$fcm_venv/bin/python" -c 'import google.auth, httpx, h2' 2> /dev/null; then
    python3 -m venv "$fcm_venv"
    "$fcm_venv/bin/pip" install -q google-auth==2.40.3 requests==2.34.2 'httpx[http2]==0.28.1' cryptography==50.0.2
fi

scratch=.build-release
swift build -c release --scratch-path "$scratch" --product herald-bench
swift build -c release --scratch-path "$scratch" --product herald-apns-bench
swift build -c release --scratch-path "$scratch" --product apns-sandbox
swift build -c release --scratch-path "$scratch" --product herald-fcm-bench
swift build -c release --scratch-path "$scratch" --product fcm-sandbox
swift build -c release --scratch-path "$scratch" --product herald
bin="$scratch/release"

# Two cores: one benchmark at a time, even across sessions.
lock=/tmp/herald-bench.lock
for bench in "${@:-gateway apns push cluster fcm}"; do
    for name in $bench; do
        echo "==> $name"
        case "$name" in
            gateway) flock -o "$lock" "$bin/herald-bench" gateway ;;
            apns) flock -o "$lock" "$bin/herald-apns-bench" --python "$venv/bin/python" ;;
            push) flock -o "$lock" "$bin/herald-bench" push ;;
            cluster) flock -o "$lock" "$bin/herald-bench" cluster ;;
            fcm) flock -o "$lock" "$bin/herald-fcm-bench" --python "$fcm_venv/bin/python" ;;
            apns-fanout) flock -o "$lock" "$bin/herald-bench" apns-fanout ;;
            idle) flock -o "$lock" "$bin/herald-bench" idle ;;
            *) echo "unknown benchmark $name (gateway, apns, push, cluster, fcm, apns-fanout, idle)" >&2; exit 64 ;;
        esac
    done
done
