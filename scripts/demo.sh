#!/usr/bin/env bash
# The main job: install, then run a real tinygrad program on the mock GPUs and check every result against DEV=CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cd /tmp && exec python3 -m mockgpu demo "$@"
