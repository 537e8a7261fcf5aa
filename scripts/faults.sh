#!/usr/bin/env bash
# Herald's fault run (issue #15): real `herald serve` processes under kill -9, PostgreSQL
# outages, APNs errors, a device that never reads, garbage MQTT connections, schemathesis
# and a tenant-isolation matrix. Prints per scenario what was lost, duplicated or leaked
# and exits non-zero when anything was. Long (about 15 minutes): not part of scripts/test.sh.
#
#   scripts/faults.sh                       # every scenario, full size
#   scripts/faults.sh kill9 garbage         # some of them
#   scripts/faults.sh --quick               # small sizes (FAULTS_* variables set each size)
#
# Uses the built binaries in .build/debug (HERALD_BIN_DIR to use others); never builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec python3 "$root/scripts/faults/faults.py" "$@"
