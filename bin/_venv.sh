# Sourced by bin/run and bin/test: create or reuse .venv and install the project into it.
# Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    PYTHON=python3
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] in [(3, 11), (3, 12)] else 1)'; then
    echo "error: Python 3.11 or 3.12 is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv .venv
fi
STAMP=.venv/.incognita-installed
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "[setup] installing the project and its pinned dependencies into .venv (first run takes a minute or two)"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
    echo "$WANT" > "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
