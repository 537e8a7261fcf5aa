#!/usr/bin/env bash
# The device SDK's package on its own (sdk/apple), as an app that adds it sees it: it
# resolves only client packages (no server dependency reaches an app), builds, and its
# tests pass.
set -euo pipefail
cd "$(dirname "$0")/../sdk/apple"
swift build --build-tests
# What SwiftNIO, NIOSSL, NIOTransportServices and swift-log bring, and nothing else.
allowed=" swift-nio swift-nio-ssl swift-nio-transport-services swift-log swift-collections swift-atomics swift-system "
resolved="$(python3 -c 'import json; print(" ".join(p["identity"] for p in json.load(open("Package.resolved"))["pins"]))')"
echo "resolved: $resolved"
for pin in $resolved; do
    case "$allowed" in
        *" $pin "*) ;;
        *) echo "error: the SDK's package resolved $pin, which an app should not have to" >&2; exit 1 ;;
    esac
done
swift test
# The Apple glue (HeraldKitApple, empty here): type-checked against shims of the Apple
# symbols it uses, and the HeraldKit just built.
HERALD_SDK_BUILT=1 ../../scripts/check-apple-glue.sh
