#!/usr/bin/env bash
# Installs what mockgpu and its tests need on a fresh Debian/Ubuntu machine:
#   clang      tinygrad's DEV=CPU backend, the reference side of every comparison
#   clang-19   the reference for bfloat16 (clang 14, Debian 12's default, has no __bf16 for tinygrad's CPU target)
#   libllvm19  LLVM with the AMDGPU target, tinygrad's compiler for DEV=MOCK+AMD
#   mockgpu    with its test extras (pytest, pytest-xdist, hypothesis, the NVRTC wheel for DEV=MOCK+NV / MOCK+CUDA)
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19)
ldconfig -p 2>/dev/null | grep -qE 'libLLVM(-19\.so|\.so\.19)' || need+=(libllvm19)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing ${need[*]} with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
