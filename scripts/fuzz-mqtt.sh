#!/usr/bin/env bash
# Fuzzes the MQTT packet decoder (HeraldMQTT) with libFuzzer.
#
#   scripts/fuzz-mqtt.sh [seconds]      default 60
#
# Builds NIOCore with SwiftPM into .build-fuzz/, compiles sdk/apple/Sources/HeraldMQTT/*.swift and
# Fuzz/MQTTDecoderFuzz/*.swift into one fuzzer binary with -sanitize=fuzzer,address, then
# runs it for a bounded time. The corpus and any crash files go to fuzz-artifacts/mqtt/.
# Exits non-zero if libFuzzer finds a crash; reproduce with
#   .build-fuzz/mqtt-decoder-fuzz fuzz-artifacts/mqtt/crash-<hash>
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

build_path="$root/.build-fuzz"
artifacts="$root/fuzz-artifacts/mqtt"
fuzzer="$build_path/mqtt-decoder-fuzz"
jobs="${FUZZ_BUILD_JOBS:-1}"

echo "==> building NIOCore (release, -j $jobs)"
swift build -c release --build-path "$build_path" --target NIOCore -j "$jobs"
bin="$(swift build -c release --build-path "$build_path" --show-bin-path)"

# NIOCore and everything it depends on: the targets that have objects in this build path.
mapfile -t objects < <(find "$bin" -path '*.build/*.o' -type f | sort)
mapfile -t built_targets < <(printf '%s\n' "${objects[@]}" | sed -E 's|^.*/([^/]+)\.build/.*$|\1|' | sort -u)
# Their C modules must be visible to import NIOCore: SwiftPM's generated module map, or
# the target's own include/module.modulemap.
module_map_flags=()
for target in "${built_targets[@]}"; do
    for map in "$bin/$target.build/module.modulemap" "$build_path"/checkouts/*/Sources/"$target"/include/module.modulemap; do
        if [[ -f "$map" ]]; then
            module_map_flags+=(-Xcc "-fmodule-map-file=$map")
        fi
    done
done

# lld links the sanitizer runtimes without gold's wall of "Cannot export" warnings.
linker_flags=()
if command -v ld.lld > /dev/null; then
    linker_flags=(-use-ld=lld)
fi

echo "==> compiling the fuzzer"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name MQTTDecoderFuzz \
    -enable-upcoming-feature ExistentialAny \
    -enable-upcoming-feature MemberImportVisibility \
    -I "$bin/Modules" \
    "${module_map_flags[@]}" "${linker_flags[@]}" \
    sdk/apple/Sources/HeraldMQTT/*.swift Fuzz/MQTTDecoderFuzz/*.swift \
    "${objects[@]}" \
    -o "$fuzzer"

# Seed corpus: a few valid packets, so libFuzzer starts from real framing.
corpus="$artifacts/corpus"
mkdir -p "$corpus"
seed() { printf "$2" > "$corpus/seed-$1"; }
seed connect    '\x10\x12\x00\x04MQTT\x04\x02\x00\x3c\x00\x06herald'
seed connect-all '\x10\x19\x00\x04MQTT\x04\xee\x00\x0a\x00\x01c\x00\x01w\x00\x01m\x00\x01u\x00\x01p'
seed connack    '\x20\x02\x00\x00'
seed publish0   '\x30\x07\x00\x03a/bhi'
seed publish1   '\x32\x09\x00\x03a/b\x00\x0ahi'
seed puback     '\x40\x02\x00\x0a'
seed pubrel     '\x62\x02\x00\x05'
seed subscribe  '\x82\x08\x00\x01\x00\x03a/#\x01'
seed suback     '\x90\x04\x00\x01\x01\x80'
seed unsubscribe '\xa2\x07\x00\x02\x00\x03a/b'
seed unsuback   '\xb0\x02\x00\x01'
seed ping       '\xc0\x00\xd0\x00\xe0\x00'

echo "==> fuzzing for ${seconds}s"
export SWIFT_BACKTRACE=enable=no
"$fuzzer" \
    -max_total_time="$seconds" \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" \
    "$corpus"
