"""Finds the host toolchain tinygrad's AMD compilers need, or says exactly what to install.

tinygrad's AMD device tries its renderers in order: HIP (comgr), then LLVM (libLLVM with the AMDGPU target), then
hipcc. The first that initializes wins, so a comgr too old for gfx11 (Debian 12's libamd-comgr2 5.2.3) is picked and
then fails to compile. NVIDIA needs NVRTC for its default CUDA C renderer (the nvidia-cuda-nvrtc-cu12 wheel; the
import finder points NVRTC_PATH at it); `:PTX` needs nothing.

NVRTC compiles CUDA C against the headers of its own release: tinygrad passes -I$CUDA_PATH/include, or, without
CUDA_PATH, -I/usr/local/cuda/include, which may hold another CUDA (CUDA 13's cuda_fp8.hpp does not compile with
NVRTC 12, so every fp8 kernel failed). bind_cuda_headers() points tinygrad at headers that match the NVRTC in use.
"""
from __future__ import annotations
import ctypes, logging, os, re, sys
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

# *** CUDA headers that match NVRTC ***

CUDA_HEADERS_HINT = "pip install nvidia-cuda-runtime-cu12 (its include/ holds the CUDA 12 headers NVRTC 12 needs, cuda_fp8.h among them)"
log = logging.getLogger("mockgpu")

def cuda_headers_version(root:str) -> tuple[int, int]|None:
  """The CUDA release whose headers are in root/include (CUDA_VERSION in cuda.h: 12090 is 12.9), or None."""
  try:
    with open(os.path.join(root, "include", "cuda.h"), errors="replace") as f: m = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", f.read())
  except OSError: return None
  return (int(m[1]) // 1000, int(m[1]) % 1000 // 10) if m else None

def nvrtc_version() -> tuple[int, int]|None:
  """The version of the NVRTC tinygrad loaded, or None without one."""
  try:
    from tinygrad.runtime.autogen import nvrtc as tnvrtc
    if tnvrtc.nvrtcVersion(ctypes.byref(major:=ctypes.c_int()), ctypes.byref(minor:=ctypes.c_int())) != 0: return None
  except Exception: return None  # no NVRTC: tinygrad's own error comes when it compiles
  return (major.value, minor.value)

def cuda_headers_for(version:tuple[int, int], search:list[str]|None=None) -> str|None:
  """A CUDA_PATH-style root (headers under root/include) of the wheel-installed CUDA runtime headers for an NVRTC of
  `version`: the same major.minor, else the same major's newest not past it."""
  best = None
  for entry in (sys.path if search is None else search):
    root = os.path.join(entry or ".", "nvidia", "cuda_runtime")
    if (v := cuda_headers_version(root)) is None or v[0] != version[0] or v > version: continue
    if v == version: return root
    if best is None or v > best[0]: best = (v, root)
  return best[1] if best else None

def bind_cuda_headers(compiler_cuda=None) -> str|None:
  """Rebind tinygrad.runtime.support.compiler_cuda.CUDA_PATH (read by NVRTCCompiler.__init__, so from the next
  compiler made on) to headers matching the NVRTC in use, unless it already names such headers. Called when the
  module is imported under a MOCK interface (mockgpu._finder). Returns the CUDA_PATH now in force."""
  if compiler_cuda is None: compiler_cuda = sys.modules.get("tinygrad.runtime.support.compiler_cuda")
  if compiler_cuda is None or (ver := nvrtc_version()) is None: return None
  current = getattr(compiler_cuda, "CUDA_PATH", "")
  if current and cuda_headers_version(current) == ver: return current  # the user's CUDA_PATH already matches
  if (root := cuda_headers_for(ver)) is None:
    log.warning("NVRTC %d.%d has no matching CUDA headers (tinygrad uses %s): %s", *ver,
                f"CUDA_PATH={current}" if current else "/usr/local/cuda/include", CUDA_HEADERS_HINT)
    return current or None
  if current: log.info("CUDA_PATH=%s holds CUDA %s headers, NVRTC is %d.%d: mockgpu compiles against %s", current,
                       ".".join(map(str, cuda_headers_version(current) or ("?",))), *ver, root)
  compiler_cuda.CUDA_PATH = root
  return root

_PROBE = """
from tinygrad.runtime.support.compiler_llvm import AMDLLVMCompiler
print(len(AMDLLVMCompiler({arch!r}).compile('define amdgpu_kernel void @k(ptr addrspace(1) %p) {{\\n store i32 1, ptr addrspace(1) %p\\n ret void\\n}}')))
"""

def llvm_compiles_for(arch:str) -> tuple[bool, str]:
  """Whether tinygrad's LLVM compiler builds a kernel for `arch`, and why not. In a child process: an LLVM that does not
  know the processor warns, falls back to a generic one and aborts the process in instruction selection."""
  import subprocess, sys
  try: p = subprocess.run([sys.executable, "-c", _PROBE.format(arch=arch)], capture_output=True, text=True, timeout=120)
  except subprocess.TimeoutExpired: return False, "the probe compile timed out"
  if p.returncode == 0 and "not a recognized processor" not in p.stderr: return True, "compiles"
  why = next((l for l in p.stderr.splitlines() if "not a recognized processor" in l), f"exit status {p.returncode}")
  return False, why.strip()

# *** llvm-objdump for DEBUG=7 ***
# tinygrad (helpers._find_llvm_objdump) disassembles AMD kernels with the first of /opt/rocm/llvm/bin/llvm-objdump,
# llvm-objdump-21, llvm-objdump-20, llvm-objdump on PATH. Debian's plain llvm-objdump is LLVM 14, which crashes (SIGSEGV)
# on tinygrad's gfx11 objects. The seam is PATH: a directory holding `llvm-objdump-20`, a link to the newest
# /usr/lib/llvm-N/bin/llvm-objdump (N >= 15), goes first on it; nothing is done when tinygrad would find one already.
OBJDUMP_MIN = 15

def newest_llvm_objdump(root:str="/usr/lib") -> str|None:
  found = sorted((int(m.group(1)), os.path.join(root, d, "bin", "llvm-objdump")) for d in (os.listdir(root) if os.path.isdir(root) else [])
                 if (m := re.fullmatch(r"llvm-(\d+)", d)) and os.path.exists(os.path.join(root, d, "bin", "llvm-objdump")))
  return found[-1][1] if found and found[-1][0] >= OBJDUMP_MIN else None

def bind_llvm_objdump() -> str|None:
  """Puts a usable llvm-objdump where tinygrad looks (see above) when DEBUG>=7 asks for disassembly; returns its path."""
  import shutil, tempfile
  if int(os.environ.get("DEBUG", "0") or 0) < 7: return None
  if any(shutil.which(p) for p in ("/opt/rocm/llvm/bin/llvm-objdump", "llvm-objdump-21", "llvm-objdump-20")): return None
  if (real := newest_llvm_objdump()) is None:
    log.warning("DEBUG=7: no llvm-objdump >= %d found; tinygrad's llvm-objdump may crash: install llvm-19 (apt-get install llvm-19)", OBJDUMP_MIN)
    return None
  shim = os.path.join(tempfile.gettempdir(), f"mockgpu-objdump-{os.getuid()}")
  os.makedirs(shim, exist_ok=True)
  if not os.path.lexists(link := os.path.join(shim, "llvm-objdump-20")): os.symlink(real, link)
  os.environ["PATH"] = shim + os.pathsep + os.environ.get("PATH", "")
  return real
