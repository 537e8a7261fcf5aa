#!/usr/bin/env bash
# Runs schemathesis (4.x) against openapi.yaml of a freshly started `herald serve`
# (embedded PostgreSQL, free ports), with the admin token for /admin/v1 and an app's
# master secret for the operator routes, a bounded number of examples per operation,
# deterministically, and prints the failures by check and operation; then walks every
# operation with a NUL in each of its strings. Exits non-zero on any failure.
#
#   scripts/schemathesis.sh [examples per operation, default 20]
#
# Uses the built binaries in .build/debug (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The private environment scripts/install-deps.sh --test makes, with the pinned versions.
[ -x "$root/.build-test-venv/bin/schemathesis" ] && export PATH="$root/.build-test-venv/bin:$PATH"
if ! command -v schemathesis > /dev/null; then
    echo "schemathesis not found: run scripts/install-deps.sh --test" >&2
    exit 1
fi
# Deterministic: the same cases on every machine and every run (no example database
# carried between runs). The randomized, broader run is scripts/faults.sh schemathesis.
# Then a NUL in every string of every operation (nulwalk).
exec timeout 900 python3 "$root/scripts/faults/faults.py" schemathesis nulwalk --deterministic --max-examples "${1:-20}"
