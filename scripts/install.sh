#!/usr/bin/env bash
# Installs apns-bulk from this checkout: a release build (the Swift runtime linked in), its shell completions (bash,
# zsh, fish) and its man pages, the last two generated from the tool's own argument definitions
# (swift-argument-parser), so they always match the binary.
#   scripts/install.sh [--prefix DIR]     default /usr/local (run as root); --prefix "$HOME/.local" needs no root
# Installs:
#   PREFIX/bin/apns-bulk
#   PREFIX/share/bash-completion/completions/apns-bulk
#   PREFIX/share/zsh/site-functions/_apns-bulk
#   PREFIX/share/fish/vendor_completions.d/apns-bulk.fish
#   PREFIX/share/man/man1/apns-bulk.1, apns-bulk.send.1, ... (one page per subcommand)
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install: --prefix needs a directory" >&2; exit 64; }; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "install: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done

bash scripts/install-deps.sh

# The release build goes to .build-static, shared with scripts/static-build.sh (the Containerfile's build): the
# Swift runtime linked in (--static-swift-stdlib), so the installed tool keeps working whatever happens to the
# toolchain. Completions come from the tool itself; the man pages from swift-argument-parser's generate-manual tool
# (a product of the package's own dependency: nothing is downloaded), which reads the tool's help as JSON.
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
work="$(mktemp -d "${TMPDIR:-/tmp}/apns-bulk-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "install: release build" >&2
"${build[@]}" --product apns-bulk
"${build[@]}" --product generate-manual
bindir="$("${build[@]}" --show-bin-path)"
bin="$bindir/apns-bulk"

echo "install: completion scripts and man pages" >&2
"$bin" --generate-completion-script bash >"$work/apns-bulk.bash"
"$bin" --generate-completion-script zsh >"$work/_apns-bulk"
"$bin" --generate-completion-script fish >"$work/apns-bulk.fish"
for file in "$work/apns-bulk.bash" "$work/_apns-bulk" "$work/apns-bulk.fish"; do
    [ -s "$file" ] || { echo "install: $(basename "$file") came out empty" >&2; exit 1; }
done
mkdir "$work/man"
"$bindir/generate-manual" "$bin" --multi-page --date "$(date -u +%Y-%m-%d)" --output-directory "$work/man"
[ -s "$work/man/apns-bulk.1" ] || { echo "install: generate-manual wrote no apns-bulk.1" >&2; exit 1; }

install -d "$prefix/bin" "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
    "$prefix/share/fish/vendor_completions.d" "$prefix/share/man/man1"
install -m 0755 "$bin" "$prefix/bin/apns-bulk"
install -m 0644 "$work/apns-bulk.bash" "$prefix/share/bash-completion/completions/apns-bulk"
install -m 0644 "$work/_apns-bulk" "$prefix/share/zsh/site-functions/_apns-bulk"
install -m 0644 "$work/apns-bulk.fish" "$prefix/share/fish/vendor_completions.d/apns-bulk.fish"
install -m 0644 "$work"/man/*.1 "$prefix/share/man/man1/"

# Where each shell looks for completions by default: bash-completion in PREFIX/share/bash-completion/completions for
# each PREFIX/share in XDG_DATA_DIRS (unset: /usr/local/share and /usr/share) and in ~/.local/share; fish in
# PREFIX/share/fish/vendor_completions.d likewise, but with XDG_DATA_DIRS unset only in /usr/share (fish 3.6);
# zsh in its fpath (Debian's: /usr/local/share/zsh/site-functions and /usr/share/zsh/...). Says how to reach a
# script a shell would not find.
completion_hints() {
    local share="$prefix/share" user_share="${XDG_DATA_HOME:-$HOME/.local/share}"
    case ":${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:" in
        *":$share:"* | *":$share/:"*) ;;
        *) [ "$share" = "$user_share" ] || echo "install: bash-completion does not look in $share: add" \
               "'source $share/bash-completion/completions/apns-bulk' to ~/.bashrc" >&2 ;;
    esac
    case ":${XDG_DATA_DIRS:-/usr/share}:" in
        *":$share:"* | *":$share/:"*) ;;
        *) [ "$share" = "$user_share" ] || echo "install: fish does not look in $share (XDG_DATA_DIRS does not" \
               "name it): mkdir -p ~/.config/fish/completions &&" \
               "ln -s $share/fish/vendor_completions.d/apns-bulk.fish ~/.config/fish/completions/" >&2 ;;
    esac
    if command -v zsh >/dev/null && ! zsh -fc '(( ${fpath[(Ie)$1]} ))' zsh "$share/zsh/site-functions"; then
        echo "install: zsh's fpath lacks $share/zsh/site-functions: add" \
            "'fpath=($share/zsh/site-functions \$fpath)' to ~/.zshrc before compinit" >&2
    fi
}
completion_hints

cat >&2 <<EOF
install: installed apns-bulk $("$prefix/bin/apns-bulk" --version) under $prefix
  $prefix/bin/apns-bulk
  $prefix/share/bash-completion/completions/apns-bulk
  $prefix/share/zsh/site-functions/_apns-bulk
  $prefix/share/fish/vendor_completions.d/apns-bulk.fish
  $prefix/share/man/man1/apns-bulk*.1     (man apns-bulk, man apns-bulk.send, ...)
EOF
