#!/usr/bin/env bash
# Create .venv and install winkref with its dev tools.
# Debian splits venv/ensurepip into python3-venv; a fresh machine may lack it,
# so install it when we can (root + apt) rather than fail with a cryptic error.
set -euo pipefail
venv="${1:-.venv}"
py="${PYTHON:-python3}"

if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "winkref needs Python 3.11 or newer; '$py' is $("$py" --version 2>&1 || echo missing)." >&2
    exit 1
fi

if ! "$py" -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    ver=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "python venv support is missing; installing python${ver}-venv with apt-get" >&2
        apt-get update -qq && apt-get install -y -qq "python${ver}-venv" >/dev/null
        "$py" -m venv "$venv"
    else
        echo "'$py -m venv' failed. On Debian run: sudo apt-get install python${ver}-venv" >&2
        exit 1
    fi
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
