"""Finds the host toolchain tinygrad's AMD compilers need, or says exactly what to install.

tinygrad's AMD device tries its renderers in order: HIP (comgr), then LLVM (libLLVM with the AMDGPU target), then
hipcc. The first that initializes wins, so a comgr too old for gfx11 (Debian 12's libamd-comgr2 5.2.3) is picked and
then fails to compile. NVIDIA needs NVRTC for its default CUDA C renderer (the nvidia-cuda-nvrtc-cu12 wheel; the
import finder points NVRTC_PATH at it); `:PTX` needs nothing.
"""
from __future__ import annotations
import ctypes, os
from dataclasses import dataclass

LLVM_HINT = ("install LLVM 19 with the AMDGPU target (Debian/Ubuntu: `apt-get install libllvm19`) "
             "or point LLVM_PATH at a libLLVM.so that has it")
COMGR_HINT = "Debian 12's comgr (libamd-comgr2 5.2.3) has no gfx11 target: remove it or use DEV=MOCK+AMD:LLVM"
NVRTC_HINT = "pip install nvidia-cuda-nvrtc-cu12 (or set NVRTC_PATH), or use the PTX renderer: DEV=MOCK+NV:PTX / MOCK+CUDA:PTX"

@dataclass
class Found:
  name: str
  path: str|None
  usable: bool
  detail: str

def llvm() -> Found:
  """libLLVM as tinygrad would load it, and whether it has the AMDGPU target."""
  from tinygrad.runtime.autogen import llvm as tllvm
  from tinygrad.runtime.support import c
  if tllvm.dll.nm not in c.DLL._loaded_: return Found("llvm", None, False, f"libLLVM not found: {LLVM_HINT}")
  path = getattr(tllvm.dll, "_name", None)
  try: tllvm.LLVMInitializeAMDGPUTargetInfo()
  except AttributeError: return Found("llvm", path, False, f"{path} was built without the AMDGPU target: {LLVM_HINT}")
  return Found("llvm", path, True, f"{path} (AMDGPU target present)")

def comgr() -> Found:
  """comgr as tinygrad would load it. Usable for gfx1100 only from comgr 2.6 (ROCm 6) on."""
  from tinygrad.runtime.autogen import comgr as tcomgr
  from tinygrad.runtime.support import c
  if tcomgr.dll.nm not in c.DLL._loaded_: return Found("comgr", None, False, "not installed (fine: LLVM is used)")
  tcomgr.amd_comgr_get_version(ctypes.byref(major:=ctypes.c_uint64()), ctypes.byref(minor:=ctypes.c_uint64()))
  ok = (major.value, minor.value) >= (2, 6)
  return Found("comgr", getattr(tcomgr.dll, "_name", None), ok, f"version {major.value}.{minor.value}" + ("" if ok else f": {COMGR_HINT}"))

def nvrtc() -> Found:
  from tinygrad.runtime.autogen import nvrtc as tnvrtc
  from tinygrad.runtime.support import c
  if tnvrtc.dll.nm not in c.DLL._loaded_: return Found("nvrtc", None, False, f"not found: {NVRTC_HINT}")
  return Found("nvrtc", os.environ.get("NVRTC_PATH") or getattr(tnvrtc.dll, "_name", None), True, "found")

def amd_problem() -> str|None:
  """Why DEV=MOCK+AMD cannot compile a kernel here, or None when it can."""
  cg, lv = comgr(), llvm()
  if cg.path is not None and not cg.usable: return f"comgr {cg.detail}"
  if not cg.usable and not lv.usable: return f"no AMD compiler: {lv.detail}"
  return None

def report() -> list[Found]: return [llvm(), comgr(), nvrtc()]
