#!/usr/bin/env bash
# Install, then run the test suite on two workers (each worker has its own mock machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec python3 -m pytest -n 2 -q tests/ "$@"
