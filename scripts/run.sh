#!/usr/bin/env bash
# Runs Herald all-in-one: the API on :8080 on an embedded PostgreSQL under .herald/,
# unless HERALD_DATABASE_URL points at one. Extra arguments go to `herald serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product heraldctl
exec swift run herald serve "$@"
