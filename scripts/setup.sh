#!/usr/bin/env bash
# Make this checkout ready to use: graphviz's `dot` (when we may install it), .venv with PyTorch and the package
# (what the Lab needs); with --test also the test tools (and Chromium for the browser test). Idempotent: a rerun
# with nothing changed takes about a second.
#   scripts/setup.sh [--test] [--dry-run]
#   PYTHON=python3.12 scripts/setup.sh      # choose the interpreter (default: python3)
#   VENV=/tmp/venv scripts/setup.sh         # another virtual environment (default: .venv)
#   --dry-run                               # say the steps it would take; install, create and write nothing
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'setup: %s\n' "$*"; }
TEST=0
DRY=0
for arg in "$@"; do
    case "$arg" in
        --test) TEST=1 ;;
        --dry-run) DRY=1 ;;
        *) say "ERROR: unknown option '$arg' (options: --test, --dry-run)" >&2; exit 2 ;;
    esac
done
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
# One stamp per install: the package (what the Lab needs) and its test extra, each holding pyproject.toml's hash
# and this checkout's path. A venv set up for the Lab alone gets the test extra on the first `make test`.
STAMP_BASE=$VENV/.cudnn_lab_base_installed
STAMP_TEST=$VENV/.cudnn_lab_test_installed
STAMP_OLD=$VENV/.cudnn_lab_installed  # written by earlier versions of this script, after `pip install -e '.[test]'`
TORCH_PIN=2.13.0
# heartbeat CMD...: run CMD, saying every HEARTBEAT_S seconds (default 20) that it is still at work, so that no long
# step (apt-get, pip's resolver or its unpacking of large wheels) leaves a silent minute; CMD's exit status
HEARTBEAT_S=${HEARTBEAT_S:-20}
heartbeat() {
    local what="$1" pid rc=0 waited=0
    "$@" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        if [ $((waited % HEARTBEAT_S)) = 0 ] && kill -0 "$pid" 2>/dev/null; then
            say "... still at work (${what##*/}, ${waited} s)"
        fi
    done
    wait "$pid" || rc=$?
    return "$rc"
}
# step "what it does": run it, or with --dry-run only say it would
step() {
    if [ "$DRY" = 1 ]; then say "would run: $*"; return 0; fi
    "$@"
}

# (a) graphviz's dot, for drawing graphs. Never fatal: without it drawings are rendered in the browser.
if command -v dot >/dev/null 2>&1; then
    say "graphviz: $(command -v dot)"
else
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else sudo=(none); fi
    fi
    if [ "${sudo[0]:-}" != none ] && command -v apt-get >/dev/null 2>&1; then
        say "installing graphviz with apt-get (under a minute)"
        if [ "$DRY" = 1 ]; then
            say "would run: ${sudo[*]:+${sudo[*]} }apt-get install graphviz"
        elif heartbeat "${sudo[@]}" apt-get update -qq \
            && heartbeat "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; then
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
if [ "$TEST" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing chromium with apt-get (for the browser test; a minute or two)"
        if [ "$DRY" = 1 ]; then
            say "would run: apt-get install chromium"
        else
            { heartbeat apt-get update -qq \
                && heartbeat env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
                || say "WARNING: apt-get could not install chromium; the browser test will skip, saying why."
        fi
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
fresh=0  # 1: the venv does not exist yet (a dry run cannot look inside it)
if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    say "$VENV is broken (its Python moved?): making it again"
    step rm -rf "$VENV"
    fresh=1
fi
if [ ! -x "$VENV/bin/python" ] || [ "$fresh" = 1 ]; then
    fresh=1
    if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
        say "creating $VENV with --system-site-packages, keeping the system's CUDA build of torch"
        step "$PYTHON" -m venv --system-site-packages "$VENV"
    else
        say "creating $VENV"
        step "$PYTHON" -m venv "$VENV"
    fi
fi
[ "$DRY" = 1 ] || fresh=0

# (b2) in a git clone: a clean filter (.gitattributes names notebooks/*.ipynb) that stores notebooks as
# `make clean-notebooks` does, so JupyterLab's autosaved outputs and kernel metadata never show in `git status`.
# Not `required`: where it is not set up, or fails, git stores the file as it is.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    say "git: notebooks/*.ipynb are stored without outputs (filter strip-notebooks, scripts/strip_notebooks.py)"
    step git config filter.strip-notebooks.clean "$VENV/bin/python scripts/strip_notebooks.py --stdin"
fi
# pip with its own progress (download bars) on stdout, and its stderr less the warning that a find-links setup
# prints for every package
pip_install() {
    local rc=0
    if [ "$DRY" = 1 ]; then say "would run: $VENV/bin/python -m pip install $*"; return 0; fi
    heartbeat "$VENV/bin/python" -m pip install --progress-bar on "$@" \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2) || rc=$?
    return "$rc"
}

# (c) torch first (a CPU build unless one is there already), then the package; with --test its test tools.
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $PWD"
stamped() { for f in "$@"; do [ -f "$f" ] && [ "$(cat "$f")" = "$want" ] && return 0; done; return 1; }
need_base=1
need_test=$TEST
if [ "$fresh" = 0 ] && stamped "$STAMP_BASE" "$STAMP_OLD"; then need_base=0; fi
if [ "$TEST" = 1 ] && [ "$fresh" = 0 ] && stamped "$STAMP_TEST" "$STAMP_OLD"; then need_test=0; fi
if [ "$need_base" = 0 ] && [ "$need_test" = 0 ]; then
    say "packages up to date ($VENV's stamps match pyproject.toml)"
    exit 0
fi
if [ "$need_base" = 1 ]; then
    if [ "$fresh" = 0 ] && "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
        say "torch: $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
    elif [ "$fresh" = 1 ] && "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null
    then
        say "torch: the system's CUDA build"
    else
        # Only a CPU build matches the local version label +cpu: where pip's find-links holds that file it is taken,
        # and elsewhere pip finds none and we ask PyTorch's CPU index. Plain `torch` would pull GB of CUDA packages.
        say "installing torch==$TORCH_PIN+cpu (CPU build, about 200 MB: a minute or two on a first install)"
        if ! pip_install "torch==$TORCH_PIN+cpu"; then
            say "torch==$TORCH_PIN+cpu not available here: installing torch from PyTorch's CPU index"
            pip_install torch --index-url https://download.pytorch.org/whl/cpu
        fi
    fi
fi
if [ "$need_base" = 1 ]; then
    say "installing cudnn_lab (editable) and what the Lab needs (JupyterLab, widgets, plotly, pandas, the cuDNN"
    say "  frontend)$([ "$need_test" = 0 ] || echo ", with its test tools"): 3-6 minutes on a first install"
else
    say "installing the test tools (pytest, ruff, mypy, nbclient, ipykernel, playwright, distributed): a minute or two"
fi
target=.
[ "$need_test" = 0 ] || target='.[test]'
pip_install -e "$target"
if [ "$DRY" = 1 ]; then
    say "dry run: nothing installed, no stamp written"
    exit 0
fi
printf '%s\n' "$want" >"$STAMP_BASE"
[ "$TEST" = 0 ] || printf '%s\n' "$want" >"$STAMP_TEST"
rm -f "$STAMP_OLD"
say "done: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)')," \
    "$("$VENV/bin/cudnn-lab" --version)"
