#!/usr/bin/env bash
# Installs what mockgpu and its tests need on a fresh Debian/Ubuntu machine:
#   clang      tinygrad's DEV=CPU backend, the reference side of every comparison
#   clang-19   the reference for bfloat16 (clang 14, Debian 12's default, has no __bf16 for tinygrad's CPU target)
#   libllvm19  LLVM with the AMDGPU target, tinygrad's compiler for DEV=MOCK+AMD
#   libllvm22  LLVM 22 for gfx950 (MI350X), which LLVM 19 does not know; mockgpu points LLVM_PATH at it for that board
#   llvm-22    its llvm-objdump, which DEBUG=7 needs to disassemble gfx950 kernels (installed without recommends)
#   mockgpu    with its test extras (pytest, pytest-xdist, hypothesis, the NVRTC wheel for DEV=MOCK+NV / MOCK+CUDA) and the
#              `cpu` extra (unicorn, capstone: DEV=MOCK+CPU, the arm64 CPU lane, which CI tests; llvm-22's llvm-objdump is its DEBUG=7 objdump)
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v clang-19 >/dev/null 2>&1 || need+=(clang-19)
ldconfig -p 2>/dev/null | grep -qE 'libLLVM(-19\.so|\.so\.19)' || need+=(libllvm19)
bare=()
ldconfig -p 2>/dev/null | grep -qE 'libLLVM(-22\.so|\.so\.22)' || bare+=(libllvm22)
[ -x /usr/lib/llvm-22/bin/llvm-objdump ] || bare+=(llvm-22)
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
if [ $(( ${#need[@]} + ${#bare[@]} )) -gt 0 ]; then $sudo apt-get update -qq; fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ ${#bare[@]} -gt 0 ]; then
  # Debian 12 has LLVM 22 in bookworm-security; where apt has none, gfx950 cannot compile and the suite's gfx950
  # cases fail (nothing skips them: a board the suite claims to test must compile)
  if apt-cache show "${bare[@]}" >/dev/null 2>&1; then
    echo "installing ${bare[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${bare[@]}" >/dev/null
  else echo "warning: apt has no ${bare[*]}: gfx950 (LLVM 22) will not compile, and the suite's gfx950 cases fail (mockgpu doctor says what is missing)" >&2
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test,cpu]"
