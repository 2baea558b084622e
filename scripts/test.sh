#!/usr/bin/env bash
# Install, lint (ruff, configured in pyproject.toml), then run the test suite on two workers (each worker has its own mock machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
python3 -m ruff check mockgpu tests bench scripts
exec python3 -m pytest -n 2 -q tests/ "$@"
