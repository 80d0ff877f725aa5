#!/usr/bin/env bash
# Make this checkout ready to use: graphviz's `dot` (when we may install it), .venv with PyTorch, the package and
# its test tools. Idempotent: a rerun with nothing changed takes about a second.
#   PYTHON=python3.12 scripts/setup.sh      # choose the interpreter (default: python3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'setup: %s\n' "$*"; }
PYTHON=${PYTHON:-python3}
VENV=.venv
STAMP=$VENV/.cudnn_lab_installed
TORCH_PIN=2.13.0

# (a) graphviz's dot, for drawing graphs. Never fatal: without it drawings are rendered in the browser.
if command -v dot >/dev/null 2>&1; then
    say "graphviz: $(command -v dot)"
else
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else sudo=(none); fi
    fi
    if [ "${sudo[0]:-}" != none ] && command -v apt-get >/dev/null 2>&1; then
        say "installing graphviz with apt-get"
        if "${sudo[@]}" apt-get update -qq \
            && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; then
            say "graphviz: $(command -v dot || echo "installed, but dot is not on PATH")"
        else
            say "WARNING: apt-get could not install graphviz; drawings will fall back to in-browser rendering."
        fi
    else
        say "graphviz's 'dot' is not installed and this script may not install it (no root, no apt-get or no"
        say "  passwordless sudo). Drawings will fall back to in-browser rendering. To draw with dot, install it:"
        say "  sudo apt-get install graphviz  |  brew install graphviz  |  conda install graphviz"
    fi
fi

# (a2) with --test: Debian's Chromium for the real-browser test of the Lab (never fatal: that test skips without it).
if [ "${1:-}" = "--test" ] && ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing chromium with apt-get (for the browser test)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
            || say "WARNING: apt-get could not install chromium; the browser test will skip, saying why."
    else
        say "chromium is not installed and this script may not install it: the browser test will skip."
    fi
fi

# (b) the virtual environment, keeping a CUDA build of torch that the system Python already has.
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    say "ERROR: cudnn_lab needs Python >= 3.10; '$PYTHON' is $("$PYTHON" --version 2>&1 || echo missing)." >&2
    say "  Run with PYTHON=/path/to/python3.1x $0" >&2
    exit 1
fi
if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    say "$VENV is broken (its Python moved?): making it again"
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
    if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
        say "creating $VENV with --system-site-packages, keeping the system's CUDA build of torch"
        "$PYTHON" -m venv --system-site-packages "$VENV"
    else
        say "creating $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
fi
pip_install() {  # quiet, less the warnings that a find-links/extra-index setup prints for every package
    local rc=0
    "$VENV/bin/python" -m pip install -q "$@" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; } || rc=$?
    return "$rc"
}

# (c) torch first (a CPU build unless one is there already), then the package and its test tools.
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $PWD"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    say "packages up to date ($STAMP matches pyproject.toml)"
    exit 0
fi
if "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    say "torch: $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
else
    # Only a CPU build matches the local version label +cpu: where pip's find-links holds that file it is taken,
    # and elsewhere pip finds none and we ask PyTorch's CPU index. Plain `torch` would pull GB of CUDA packages.
    say "installing torch==$TORCH_PIN+cpu (CPU build)"
    if ! pip_install "torch==$TORCH_PIN+cpu" >/dev/null; then
        say "torch==$TORCH_PIN+cpu not available here: installing torch from PyTorch's CPU index"
        pip_install torch --index-url https://download.pytorch.org/whl/cpu
    fi
fi
say "installing cudnn_lab (editable) with its test tools"
pip_install -e '.[test]'
printf '%s\n' "$want" >"$STAMP"
say "done: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)')," \
    "$("$VENV/bin/cudnn-lab" --version)"
