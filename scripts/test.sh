#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what is missing, checks formatting,
# builds, checks the README's quick start, JPush's official Python client, FCM's contract
# with google-auth and the web console in Chromium against a running server, runs every test against a real PostgreSQL (started by the tests
# themselves), then checks openapi.yaml against a running server with schemathesis.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test

echo "==> swift format lint"
swift format lint --strict -r Sources Tests Plugins Fuzz Package.swift sdk

echo "==> deployment files (scripts/check-deploy.sh)"
scripts/check-deploy.sh

echo "==> the device SDK's package alone (scripts/check-sdk.sh)"
scripts/check-sdk.sh

echo "==> HeraldKit's payload parsers under libFuzzer, from a fixed seed (scripts/fuzz-payload.sh)"
scripts/fuzz-payload.sh --runs 30000

echo "==> swift build --build-tests"
swift build --build-tests

echo "==> README quick start"
scripts/check-quickstart.sh

echo "==> JPush's official Python client against the server (scripts/check-jpush-client.sh)"
scripts/check-jpush-client.sh

echo "==> FCM's wire contract against google-auth and PyCA cryptography (scripts/check-fcm-interop.sh)"
scripts/check-fcm-interop.sh

echo "==> the web console in a real browser (scripts/check-console.sh)"
scripts/check-console.sh

echo "==> swift test"
scripts/run-tests.sh

echo "==> openapi.yaml against the server (schemathesis)"
scripts/schemathesis.sh
