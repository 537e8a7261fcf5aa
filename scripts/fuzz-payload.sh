#!/usr/bin/env bash
# Fuzzes HeraldKit's parsers of what arrives from outside the app: a payload from the long
# connection (ParsedPayload) and an APNs notification's userInfo (HeraldEvent.fromAPNs).
#
#   scripts/fuzz-payload.sh [seconds]      default 60, random
#   scripts/fuzz-payload.sh --runs N       N inputs from a fixed seed: the same on every
#                                          machine (the test command runs this)
#
# Compiles HeraldKit's parsing files (Foundation only) with Fuzz/PayloadParserFuzz/*.swift
# into one fuzzer binary with -sanitize=fuzzer,address, seeds it with Herald's real
# payloads, and runs it for a bounded time. Corpus and crash files go to
# fuzz-artifacts/payload/. Exits non-zero if libFuzzer finds a crash; reproduce with
#   .build-fuzz/payload-parser-fuzz fuzz-artifacts/payload/crash-<hash>
set -euo pipefail

limits=(-max_total_time="${1:-60}")
if [[ "${1:-}" == "--runs" ]]; then
    limits=(-runs="${2:?--runs needs a count}" -seed=1)
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

kit=sdk/apple/Sources/HeraldKit
artifacts="$root/fuzz-artifacts/payload"
# A deterministic run starts from the seeds alone, not from a corpus an earlier run grew.
if [[ "${1:-}" == "--runs" ]]; then
    artifacts="$(mktemp -d)"
    trap 'rm -rf "$artifacts"' EXIT
fi
fuzzer="$root/.build-fuzz/payload-parser-fuzz"
mkdir -p "$root/.build-fuzz" "$artifacts"

linker_flags=()
if command -v ld.lld > /dev/null; then
    linker_flags=(-use-ld=lld)
fi

echo "==> compiling the fuzzer"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -module-name PayloadParserFuzz \
    -enable-upcoming-feature ExistentialAny \
    -enable-upcoming-feature MemberImportVisibility \
    "${linker_flags[@]}" \
    "$kit/ConnectionPayload.swift" "$kit/HeraldEvent.swift" "$kit/NotificationConfig.swift" \
    "$kit/APNsArrival.swift" "$kit/HeraldRefusal.swift" \
    Fuzz/PayloadParserFuzz/*.swift \
    -o "$fuzzer"

# Seed corpus: what Herald sends, over the connection and through APNs.
corpus="$artifacts/corpus"
mkdir -p "$corpus"
seed() { printf '%s' "$2" > "$corpus/seed-$1"; }
seed notification '{"type":"notification","msg_id":"1810000000000000001","identifier":"sale","notification":{"title":"Sale","alert":"50% off","badge":3,"sound":"default","extras":{"news_id":134,"tags":["a"]},"media_url":"https://cdn.example.com/a.jpg"}}'
seed localized '{"type":"notification","msg_id":"2","notification":{"alert":"Hi","localizations":{"zh-Hans":{"title":"你好","body":"世界"},"fr":"Salut"}}}'
seed config '{"type":"notification","msg_id":"3","notification":{"alert":"x","category":"push_extension_c","notification_config":[{"identifier":"push_extension_c","options":1,"default_router":{"router_url":"app://a","parameters":{"id":1}},"actions":[{"identifier":"see","title":"Go","options":4,"behavior":1,"extension_option":2}]}]}}'
seed replace '{"type":"replace","msg_id":"4","identifier":"score","notification":{"alert":"2-0"},"message":{"msg_content":"m","extras":{"k":"v"}}}'
seed recall '{"type":"recall","msg_id":"5","identifiers":["a","b"]}'
seed ahead '{"type":"category_config","msg_id":"6","notification_config":{"identifier":"sale","version":2,"options":["customDismissAction"]}}'
seed apns '{"aps":{"alert":{"title":"T","subtitle":"S","body":"B"},"badge":2,"sound":{"critical":1,"name":"a.caf"},"category":"c","mutable-content":1},"herald":{"msg_id":"7","identifier":"o-7","media_url":"https://x/y.png"},"news_id":134,"notification_config":{"identifier":"c","actions":[{"identifier":"a","title":"A"}]}}'
seed apns-recall '{"aps":{"content-available":1},"herald":{"msg_id":"8","type":"recall"},"herald-recall":["a"]}'

echo "==> fuzzing (${limits[*]})"
export SWIFT_BACKTRACE=enable=no
"$fuzzer" \
    "${limits[@]}" \
    -max_len=8192 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" \
    "$corpus"
