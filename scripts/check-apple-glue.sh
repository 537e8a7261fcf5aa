#!/usr/bin/env bash
# Type-checks HeraldKitApple, the Apple-only glue of the SDK (sdk/apple/Sources/HeraldKitApple),
# on Linux: against shims declaring the Apple symbols it uses with Apple's signatures
# (sdk/apple/AppleShims, SYMBOLS.md) and against the built HeraldKit. Fails when the glue uses
# a symbol no shim declares, or uses one wrongly.
#
#   scripts/check-apple-glue.sh        builds what the glue imports first
#   HERALD_SDK_BUILT=1 scripts/...     when sdk/apple was just built (check-sdk.sh)
#
# Swift 6's data-race checks run after type-checking, on SIL: the glue is compiled to SIL
# (-emit-sil), which type-checks it and runs them. A probe naming the glue's public types
# makes sure the glue's #if conditions didn't leave nothing to check.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
sdk="$root/sdk/apple"
cd "$sdk"

if [[ "${HERALD_SDK_BUILT:-}" != 1 ]]; then
    echo "==> building what the glue imports"
    swift build --target HeraldKitApple
fi
bin="$(swift build --show-bin-path)"
out="$sdk/.build/apple-shims"
rm -rf "$out"
mkdir -p "$out"

swift_flags=(-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility)

echo "==> compiling the shims"
for dir in AppleShims/*/; do
    module="$(basename "$dir")"
    swiftc -emit-module -parse-as-library "${swift_flags[@]}" \
        -module-name "$module" -emit-module-path "$out/$module.swiftmodule" "$dir"*.swift
done

# The C modules HeraldKit's dependencies import: SwiftPM's generated module map, or the
# target's own include/module.modulemap.
module_map_flags=()
for target_dir in "$bin"/*.build; do
    target="$(basename "$target_dir" .build)"
    for map in "$target_dir/module.modulemap" .build/checkouts/*/Sources/"$target"/include/module.modulemap; do
        if [[ -f "$map" ]]; then
            module_map_flags+=(-Xcc "-fmodule-map-file=$map")
        fi
    done
done

cat > "$out/Probe.swift" <<'SWIFT'
// The glue compiled to something: each public type of it exists here.
let probe: [Any.Type] = [
    HeraldAppGroup.self, UserNotificationPresenter.self, HeraldNotificationDelegate.self,
    RemoteNotifications.self, VoIPRegistration.self, KeychainCredentialStore.self,
    NotificationServiceHelper.self, NetworkPathMonitor.self, AppLifecycleObserver.self,
]
SWIFT

echo "==> type-checking Sources/HeraldKitApple against the shims"
swiftc -emit-sil -wmo -o /dev/null -parse-as-library "${swift_flags[@]}" -warnings-as-errors \
    -module-name HeraldKitApple -I "$out" -I "$bin/Modules" "${module_map_flags[@]}" \
    Sources/HeraldKitApple/*.swift "$out/Probe.swift"
echo "HeraldKitApple type-checks against the shims of $(cd AppleShims && echo */ | tr -d /)"
