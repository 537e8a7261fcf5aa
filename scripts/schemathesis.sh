#!/usr/bin/env bash
# Runs schemathesis (4.x) against openapi.yaml of a freshly started `herald serve`
# (embedded PostgreSQL, free ports), with the admin token for /admin/v1 and an app's
# master secret for the operator routes, a bounded number of examples per operation,
# and prints the failures by check and operation. Exits non-zero on any failure.
#
#   scripts/schemathesis.sh [examples per operation, default 20]
#
# Uses the built binaries in .build/debug (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The private environment scripts/install-deps.sh --test makes, when there is one.
[ -x "$root/.build-test-venv/bin/schemathesis" ] && export PATH="$root/.build-test-venv/bin:$PATH"
if ! command -v schemathesis > /dev/null; then
    echo "schemathesis not found: pip install 'schemathesis>=4,<5'" >&2
    exit 1
fi
exec timeout 600 python3 "$root/scripts/faults/faults.py" schemathesis --max-examples "${1:-20}"
