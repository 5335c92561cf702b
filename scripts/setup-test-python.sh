#!/usr/bin/env bash
# Creates the Python the tests that query exported Parquet files use (DuckDB, Polars, PySpark;
# Spark also needs a `java` on PATH), in a venv
# under target/, from the pinned packages of scripts/requirements-test.txt, and prints the
# path of its python: export it as PI_SESSION_TEST_PYTHON.
#
#   export PI_SESSION_TEST_PYTHON="$(bash scripts/setup-test-python.sh)"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CARGO_TARGET_DIR:-$root/target}/py-tables"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/scripts/requirements-test.txt" >&2
echo "$venv/bin/python"
