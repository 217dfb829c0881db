#!/usr/bin/env bash
# Checks that unsafe pointer code stays in the files that wrap C modules: lists the Swift files under Sources/
# that contain `Unsafe`, `Unmanaged` or `OpaquePointer`, and fails, naming each offender, when one is not matched
# by docs/ARCHITECTURE.md's list of files allowed to hold unsafe code (the fenced block after the line
# `<!-- unsafe-allowed -->`, one path or glob per line; `*` does not cross a `/`).
set -euo pipefail
cd "$(dirname "$0")/.."

allowed=()
while IFS= read -r line; do
    [ -n "$line" ] && allowed+=("$line")
done < <(awk '/<!-- unsafe-allowed -->/ { marker = 1; next }
              marker && /^```/ { if (inside) exit; inside = 1; next }
              inside { sub(/#.*/, ""); gsub(/[ \t]+/, ""); print }' docs/ARCHITECTURE.md)
if [ ${#allowed[@]} -eq 0 ]; then
    echo "check-unsafe: docs/ARCHITECTURE.md has no list of files allowed to hold unsafe code" >&2
    exit 2
fi

# Matches a path against a glob whose `*` stays inside one path component.
matches() {
    local path=$1 glob=$2
    [[ "$(dirname "$path")" == "$(dirname "$glob")" ]] && [[ "$(basename "$path")" == $(basename "$glob") ]]
}

holders=()
while IFS= read -r file; do
    holders+=("$file")
done < <(grep -rlE --include='*.swift' 'Unsafe|Unmanaged|OpaquePointer' Sources | sort)

offenders=()
for file in "${holders[@]}"; do
    permitted=0
    for glob in "${allowed[@]}"; do
        if matches "$file" "$glob"; then permitted=1; break; fi
    done
    [ "$permitted" -eq 1 ] || offenders+=("$file")
done

echo "check-unsafe: ${#holders[@]} files hold unsafe code, ${#offenders[@]} outside docs/ARCHITECTURE.md's list" >&2
if [ ${#offenders[@]} -gt 0 ]; then
    for file in "${offenders[@]}"; do
        echo "check-unsafe: not allowed to hold unsafe code: $file" >&2
        grep -nE 'Unsafe|Unmanaged|OpaquePointer' "$file" | head -3 | sed 's/^/    /' >&2
    done
    exit 1
fi
