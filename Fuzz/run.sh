#!/usr/bin/env bash
# Builds the libFuzzer targets (Sources/Fuzz*) with -sanitize=fuzzer,address and runs each for a
# bounded time on a copy of its seed corpus. New corpus entries and crash artifacts stay in the
# build folder, never in the repository.
#
# usage: Fuzz/run.sh SECONDS [TARGET...]
#   SECONDS  how long each target runs (libFuzzer -max_total_time)
#   TARGET   FuzzManifestReader FuzzMailParser FuzzProtocolLine FuzzContentSniffer (default: all)
# Environment: SWIFT (default swift), FUZZ_BUILD (default .build-fuzz), FUZZ_FLAGS (extra libFuzzer flags).
# Exit status 1 when any target found a crash, leak or timeout; its input is printed and kept
# under FUZZ_BUILD/artifacts/TARGET/.
set -euo pipefail

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
seconds=$1
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
swift=${SWIFT:-swift}
build=${FUZZ_BUILD:-$repo/.build-fuzz}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzManifestReader FuzzMailParser FuzzProtocolLine FuzzContentSniffer)

cd "$repo"
mkdir -p "$build"
for target in "${targets[@]}"; do
    if [ ! -d "Fuzz/Corpus/$target" ]; then
        echo "error: no seed corpus Fuzz/Corpus/$target (unknown target '$target'?)" >&2
        exit 2
    fi
    # The linker's "Cannot export local symbol __asan_..." lines are noise from ASan's instrumentation.
    if ! DOCROUTE_FUZZ=1 "$swift" build --build-path "$build" -Xswiftc -sanitize=fuzzer,address \
        --product "$target" >"$build/$target.build.log" 2>&1; then
        grep -v "Cannot export local symbol" "$build/$target.build.log" >&2 || true
        echo "error: building $target failed" >&2
        exit 1
    fi
done
bin=$(DOCROUTE_FUZZ=1 "$swift" build --build-path "$build" --show-bin-path)

failed=()
for target in "${targets[@]}"; do
    corpus="$build/corpus/$target"
    artifacts="$build/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    # Seeds are copied, not used in place: libFuzzer writes the inputs it finds into its corpus folder.
    cp -n "Fuzz/Corpus/$target"/* "$corpus/"
    echo "== $target: ${seconds}s, corpus $corpus ($(ls "$corpus" | wc -l) inputs)"
    log="$build/$target.fuzz.log"
    flags=()
    # Foundation leaks on every unparsable plist (Fuzz/lsan-suppressions.txt), and libFuzzer then runs a
    # full leak scan after each such input: 30 inputs a second instead of 1,000. The reader is plain
    # Swift, so the per-input scan is off for it; the other targets keep it.
    [ "$target" != FuzzManifestReader ] || flags+=(-detect_leaks=0)
    # shellcheck disable=SC2086
    if LSAN_OPTIONS="suppressions=$repo/Fuzz/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}" "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" ${flags[@]+"${flags[@]}"} ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1; then
        grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|Done )" "$log" |
            sed 's/^/   /'
    else
        failed+=("$target")
        grep -E -A40 "^==[0-9]+==|Fatal error|SUMMARY|ERROR: libFuzzer" "$log" | head -60 >&2
        grep -E "Test unit written to" "$log" >&2 || true
        echo "== $target FAILED (log $log)" >&2
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzzing: no crashes in ${targets[*]} (${seconds}s each)"
