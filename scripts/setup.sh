#!/usr/bin/env bash
# Install everything the project needs: Debian packages (when run as root) and a pinned
# Python virtual environment in .venv/. Idempotent; `make setup` calls it only when needed.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(clang-19 llvm-19 lld-19 libclc-19 pocl-opencl-icd iverilog make g++ ccache openfpgaloader)
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ]; then
        echo "setup: installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
    else
        echo "setup: WARNING: missing Debian packages (run as root or install them): ${missing[*]}" >&2
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
echo "setup: installing pinned Python packages into $VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt -c requirements.lock
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e .
echo "setup: done"
