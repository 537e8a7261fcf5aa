#!/usr/bin/env bash
# Runs Herald's benchmarks in release mode, one at a time, each with its peer in the same
# run: the gateway against mosquitto (herald-bench gateway), the APNs provider against
# aioapns (herald-apns-bench), the push path end to end (herald-bench push), and three
# herald serve nodes against one (herald-bench cluster); on request, the message center's
# fan-out to APNs (herald-bench apns-fanout, no peer).
# Usage: scripts/bench.sh [gateway|apns|push|cluster|apns-fanout ...]   (default: the first four)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench

# aioapns, the APNs peer, in a private virtual environment.
venv=.build-bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aioapns' 2> /dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q aioapns
fi

scratch=.build-release
swift build -c release --scratch-path "$scratch" --product herald-bench
swift build -c release --scratch-path "$scratch" --product herald-apns-bench
swift build -c release --scratch-path "$scratch" --product apns-sandbox
swift build -c release --scratch-path "$scratch" --product herald
bin="$scratch/release"

# Two cores: one benchmark at a time, even across sessions.
lock=/tmp/herald-bench.lock
for bench in "${@:-gateway apns push cluster}"; do
    for name in $bench; do
        echo "==> $name"
        case "$name" in
            gateway) flock -o "$lock" "$bin/herald-bench" gateway ;;
            apns) flock -o "$lock" "$bin/herald-apns-bench" --python "$venv/bin/python" ;;
            push) flock -o "$lock" "$bin/herald-bench" push ;;
            cluster) flock -o "$lock" "$bin/herald-bench" cluster ;;
            apns-fanout) flock -o "$lock" "$bin/herald-bench" apns-fanout ;;
            *) echo "unknown benchmark $name (gateway, apns, push, cluster, apns-fanout)" >&2; exit 64 ;;
        esac
    done
done
