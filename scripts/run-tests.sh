#!/usr/bin/env bash
# Runs the built test suite (Swift Testing) under a watchdog, so that a test that hangs
# fails the run in minutes, saying what it was doing, instead of holding CI until its
# time limit. Arguments go to the test runner (e.g. --filter GatewayDeliveryTests).
#
# The whole suite takes about a minute here. If no test has ended for
# HERALD_TEST_STALL_SECONDS (default 300), the watchdog prints the tests that started and
# never ended, every thread's stack of the test process (when gdb is installed) and the
# PostgreSQL processes, then stops the run, runs the whole suite once more so every other
# result is seen, and fails (see the end of this file).
set -uo pipefail
cd "$(dirname "$0")/.."
stall_limit="${HERALD_TEST_STALL_SECONDS:-300}"
bundle="$(swift build --show-bin-path)/heraldPackageTests.xctest"
[ -x "$bundle" ] || { echo "no test bundle at $bundle: run swift build --build-tests first" >&2; exit 1; }
events="$(mktemp /tmp/herald-test-events.XXXXXX)"
# The stall report, printed again at the very end: a CI log shown by its tail would
# otherwise lose it above the second run's output.
report="$(mktemp /tmp/herald-test-stall.XXXXXX)"
trap 'rm -f "$events" "$report"' EXIT

ended_count() { grep -c '"kind":"testEnded"' "$events"; }

diagnose() {
    echo
    echo "==> no test ended for ${stall_limit} s: the run is stuck"
    if command -v gdb > /dev/null; then
        echo "--- threads of the test process $runner"
        timeout 120 gdb -p "$runner" -batch -ex 'thread apply all bt 30' 2>&1 | grep -E '^(Thread|#)' | cut -c1-200
    else
        echo "--- (gdb is not installed: no thread stacks)"
    fi
    echo "--- PostgreSQL processes"
    ps -o pid,etime,args -C postgres 2> /dev/null | cut -c1-200
    echo "--- tests that started and never ended"
    python3 - "$events" << 'EOF'
import json, sys
running = {}
for line in open(sys.argv[1]):
    try:
        event = json.loads(line)
    except ValueError:
        continue
    payload = event.get("payload", {})
    if event.get("kind") != "event":
        continue
    if payload.get("kind") == "testStarted":
        running[payload["testID"]] = payload["instant"]["since1970"]
    elif payload.get("kind") == "testEnded":
        running.pop(payload.get("testID"), None)
for test, started in sorted(running.items(), key=lambda item: item[1]):
    print(f"  {test}")
EOF
}

# Runs the suite once: the same runner `swift test` starts, with its event stream (one
# JSON object per line) where the watchdog follows which tests started and ended.
# Returns the runner's status, or 124 when it stalled and was stopped.
run_once() {
    : > "$events"
    "$bundle" --testing-library swift-testing --event-stream-output-path "$events" --event-stream-version 0 "$@" &
    runner=$!
    local last_count=0 last_progress=$SECONDS count
    while kill -0 "$runner" 2> /dev/null; do
        sleep 2
        count="$(ended_count)"
        if [ "$count" != "$last_count" ]; then
            last_count=$count
            last_progress=$SECONDS
        elif [ $((SECONDS - last_progress)) -ge "$stall_limit" ]; then
            diagnose 2>&1 | tee -a "$report"
            kill -KILL "$runner" 2> /dev/null
            wait "$runner" 2> /dev/null
            # The tests' embedded cluster, which the killed process can no longer stop.
            local cluster="${TMPDIR:-/tmp}/herald-tests-$runner"
            [ -f "$cluster/data/postmaster.pid" ] && kill -QUIT "$(head -1 "$cluster/data/postmaster.pid")" 2> /dev/null
            sleep 1
            rm -rf "$cluster"
            return 124
        fi
    done
    wait "$runner"
}

# A stall is a defect to fix from the report above, never a pass: it is printed in full and
# the run fails. The suite then runs once more, whole, so that a rare stall doesn't hide
# every other result; that run's failures are reported as always, but its passing doesn't
# turn the stall into a success.
run_once "$@"
status=$?
if [ "$status" = 124 ]; then
    echo "==> the test run stalled and was stopped; running the whole suite once more for the other results" >&2
    run_once "$@"
    rerun=$?
    case "$rerun" in
        124) echo "==> the test run stalled again" >&2 ;;
        0) echo "==> the second run passed, but the stall above is a defect: this run fails" >&2 ;;
        *) echo "==> the second run failed too (status $rerun)" >&2 ;;
    esac
    status=124
    # The report again, shortest first: the tests that never ended, then each thread's
    # frames in Herald's code or the tests' (the whole stacks are above).
    echo "==> the stall, again: tests that started and never ended" >&2
    sed -n '/tests that started and never ended/,$p' "$report" | tail -n +2 | head -30 >&2
    echo "==> the stalled threads' frames in Herald or its tests" >&2
    grep -E '^Thread|Herald|Tests|Test[A-Z]' "$report" | grep -vE 'libswift|libdispatch' | cut -c1-180 | head -60 >&2
fi
exit "$status"
