#!/usr/bin/env bash
# Checks that unsafe code stays in the files allowed to hold it: lists the Swift files under Sources/ that contain
# `unsafe`, `unmanaged`, `opaquepointer` or `[unchecked:` in any letter case (so `unsafeLoadUnaligned`,
# `[unchecked: i]` and `fromUncheckedByteOffset` are caught as well as `UnsafePointer`), and fails, naming each
# offender, when one is not matched by scripts/unsafe-allowed.txt (one path or glob per line; `*` does not cross a
# `/`). Unchecked reads (`fromUncheckedByteOffset`, `[unchecked:`) are refused everywhere, listed files included.
# Usage: scripts/check-unsafe.sh [--self-test] [ROOT]
#   ROOT: the folder holding Sources/ and scripts/unsafe-allowed.txt (default: this repository).
#   --self-test: runs the check on a copy of this repository with probe files added (an unchecked load in a
#   listed file, a lower-case `unsafeLoadUnaligned` and an `UnsafeRawPointer` in files not listed) and fails
#   unless the check fails naming each probe; then runs the check on this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

check() {
    local root=$1
    local list="$root/scripts/unsafe-allowed.txt"
    [ -f "$list" ] || { echo "check-unsafe: $list is missing" >&2; return 2; }
    local allowed=() line
    while IFS= read -r line; do
        line="${line%%#*}"
        line="${line//[[:space:]]/}"
        [ -n "$line" ] && allowed+=("$line")
    done < "$list"
    [ ${#allowed[@]} -gt 0 ] || { echo "check-unsafe: $list lists no file" >&2; return 2; }

    local holders=() file
    while IFS= read -r file; do
        holders+=("$file")
    done < <(cd "$root" && grep -rliE --include='*.swift' 'unsafe|unmanaged|opaquepointer|\[unchecked:' Sources | sort)

    local offenders=() glob permitted
    for file in "${holders[@]}"; do
        permitted=0
        for glob in "${allowed[@]}"; do
            if [[ "$(dirname "$file")" == "$(dirname "$glob")" ]] && [[ "$(basename "$file")" == $(basename "$glob") ]]; then
                permitted=1
                break
            fi
        done
        [ "$permitted" -eq 1 ] || offenders+=("$file")
    done
    local unchecked=()
    while IFS= read -r file; do
        unchecked+=("$file")
    done < <(cd "$root" && grep -rlE --include='*.swift' 'fromUncheckedByteOffset|\[unchecked:' Sources | sort)

    echo "check-unsafe: ${#holders[@]} files hold unsafe code, ${#offenders[@]} outside scripts/unsafe-allowed.txt," \
        "${#unchecked[@]} with unchecked reads" >&2
    for file in "${offenders[@]}"; do
        echo "check-unsafe: not allowed to hold unsafe code: $file" >&2
        (cd "$root" && grep -niE 'unsafe|unmanaged|opaquepointer|\[unchecked:' "$file" | head -3 | sed 's/^/    /' >&2)
    done
    for file in "${unchecked[@]}"; do
        echo "check-unsafe: an unchecked read: $file" >&2
        (cd "$root" && grep -nE 'fromUncheckedByteOffset|\[unchecked:' "$file" | head -3 | sed 's/^/    /' >&2)
    done
    [ ${#offenders[@]} -eq 0 ] && [ ${#unchecked[@]} -eq 0 ]
}

self_test() {
    local copy
    copy="$(mktemp -d)"
    trap 'rm -rf "$copy"' RETURN
    mkdir -p "$copy/scripts"
    cp -R "$here/Sources" "$copy/"
    cp "$here/scripts/unsafe-allowed.txt" "$copy/scripts/"
    check "$copy" 2>/dev/null || { echo "check-unsafe: --self-test: the copy fails before any probe" >&2; return 1; }
    printf 'func probe(_ raw: RawSpan) -> UInt64 { raw.unsafeLoadUnaligned(fromByteOffset: 0, as: UInt64.self) }\n' \
        > "$copy/Sources/APNSCore/Text/ProbeLowerCase.swift"
    printf 'func probe(_ p: UnsafeRawPointer) -> UInt8 { p.load(as: UInt8.self) }\n' \
        > "$copy/Sources/APNSCore/Text/ProbePointer.swift"
    printf 'func probe(_ raw: RawSpan) -> UInt64 { raw.unsafeLoadUnaligned(fromUncheckedByteOffset: 0, as: UInt64.self) }\n' \
        >> "$copy/Sources/APNSCore/Text/ByteSearch.swift"
    local output status=0
    output="$(check "$copy" 2>&1)" || status=$?
    local probe failed=0
    for probe in "not allowed to hold unsafe code: Sources/APNSCore/Text/ProbeLowerCase.swift" \
                 "not allowed to hold unsafe code: Sources/APNSCore/Text/ProbePointer.swift" \
                 "an unchecked read: Sources/APNSCore/Text/ByteSearch.swift"; do
        if ! grep -qF "$probe" <<< "$output"; then
            echo "check-unsafe: --self-test: the check missed a probe: expected '$probe' in:" >&2
            echo "$output" >&2
            failed=1
        fi
    done
    [ "$status" -ne 0 ] || { echo "check-unsafe: --self-test: the check passed with probes in place" >&2; failed=1; }
    [ "$failed" -eq 0 ] && echo "check-unsafe: --self-test: each probe was caught" >&2
    return "$failed"
}

case "${1:-}" in
    --self-test) self_test && check "$here" ;;
    -h|--help) sed -n '2,12p' "$0" ;;
    *) check "${1:-$here}" ;;
esac
