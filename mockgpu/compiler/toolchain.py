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
import ctypes, os, re, sys
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
from mockgpu import log

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

# *** which libLLVM compiles for a board ***
# tinygrad loads libLLVM once per process, when tinygrad.runtime.autogen.llvm is first imported (by the first LLVM
# renderer or compiler it makes): from LLVM_PATH when that names a file, else the first of libLLVM.so.N, libLLVM-21,
# -20, ..., -14 in the system library directories (runtime/support/c.py, DLL.findlib). Its list ends at 21, so Debian's
# libllvm22 (libLLVM-22.so) is never found by itself, and LLVM 19 does not know gfx950: it warns "'gfx950' is not a
# recognized processor", falls back to a generic one and aborts in instruction selection. The seam is LLVM_PATH: when a
# MOCK interface is imported (before tinygrad loads libLLVM), bind_llvm sets it, unless it is set already, to another
# installed libLLVM, the oldest newer one that compiles for the process's board, and only when tinygrad's own choice
# does not. tinygrad's compile workers inherit it. Which LLVM compiles for which processor is asked of LLVM itself
# (probe: a one-store kernel compiled by tinygrad's AMDLLVMCompiler in a child process), remembered in the cache dir.
LLVM_TESTED = 22  # the newest LLVM mockgpu is tested with: the release the advice names when none installed compiles
LLVM_NEWER_HINT = (f"install a newer LLVM (Debian/Ubuntu: `apt-get install libllvm{LLVM_TESTED}`) or point LLVM_PATH "
                   "at a libLLVM.so that knows the processor")
_LIBLLVM = re.compile(r"libLLVM-(\d+)\.so|libLLVM\.so\.(\d+)(?:\.\d+)*")

def library_dirs() -> list[str]:
  """The directories tinygrad searches for libLLVM, in its order (LD_LIBRARY_PATH first)."""
  import sysconfig
  multiarch = sysconfig.get_config_var("MULTIARCH") or ""
  return [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d] + \
         ["/usr/lib64", "/usr/lib", "/usr/local/lib", "/lib", "/lib64", f"/lib/{multiarch}", f"/usr/lib/{multiarch}"]

def llvm_major(path:str) -> int|None:
  """The LLVM release of a libLLVM file, from its name (libLLVM-22.so, libLLVM.so.19.1), or None."""
  m = _LIBLLVM.fullmatch(os.path.basename(path))
  return int(m[1] or m[2]) if m else None

def installed_llvms() -> dict[int, str]:
  """Every installed libLLVM by release, oldest first: the first file of each release in library_dirs()."""
  found:dict[int, str] = {}
  for d in library_dirs():
    try: names = sorted(os.listdir(d))
    except OSError: continue
    for n in names:  # the prefix test first: the directories hold thousands of other libraries
      if n.startswith("libLLVM") and (major := llvm_major(n)) is not None and os.path.isfile(p := os.path.join(d, n)): found.setdefault(major, p)
  return dict(sorted(found.items()))

@dataclass(frozen=True)
class Probe:
  ok: bool
  why: str
  lib: str|None   # the libLLVM the probe loaded

_PROBE = """
from tinygrad.runtime.autogen import llvm
print(getattr(llvm.dll, "_name", None) or "", flush=True)
from tinygrad.runtime.support.compiler_llvm import AMDLLVMCompiler
AMDLLVMCompiler({arch!r}).compile('define amdgpu_kernel void @k(ptr addrspace(1) %p) {{\\n store i32 1, ptr addrspace(1) %p\\n ret void\\n}}')
"""

def _run_probe(arch:str, lib:str|None) -> Probe:
  """A child process compiles a kernel for `arch` with tinygrad's LLVM compiler (lib as LLVM_PATH, or tinygrad's own
  choice): an LLVM that does not know the processor warns, falls back to a generic one and aborts the process."""
  import subprocess
  env = {k: v for k, v in os.environ.items() if k not in ("LLVM_PATH", "DEV", "DEBUG")}
  if lib is not None: env["LLVM_PATH"] = lib
  try: p = subprocess.run([sys.executable, "-c", _PROBE.format(arch=arch)], capture_output=True, text=True, timeout=120, env=env)
  except subprocess.TimeoutExpired: return Probe(False, "the probe compile timed out", lib)
  loaded = p.stdout.splitlines()[0].strip() if p.stdout.strip() else None
  if loaded is None: return Probe(False, f"libLLVM not found: {LLVM_HINT}", None)
  unknown = next((l.strip() for l in p.stderr.splitlines() if "not a recognized processor" in l), None)
  if p.returncode == 0 and unknown is None: return Probe(True, "compiles", loaded)
  last = p.stderr.strip().splitlines()[-1:] or [""]
  return Probe(False, unknown or f"exit status {p.returncode}: {last[0][:200]}", loaded)

_probes:dict[str, Probe] = {}

def _probe_key(arch:str, lib:str|None) -> str:
  """What a probe's answer depends on: the processor, the library asked for and every installed libLLVM file."""
  import hashlib
  files = sorted(installed_llvms().values()) + ([lib] if lib else [])
  stamp = [(f, *_stamp(f)) for f in files]
  return hashlib.sha256(repr((arch, lib, os.environ.get("LD_LIBRARY_PATH", ""), stamp)).encode()).hexdigest()[:24]

def _stamp(path:str) -> tuple[int, int]:
  try: st = os.stat(path)
  except OSError: return (-1, -1)  # a missing LLVM_PATH file: tinygrad then searches as if it were unset
  return (st.st_size, st.st_mtime_ns)

def _probe_cache_file() -> str|None:
  from mockgpu import config
  return None if (d := config.cache_dir()) is None else os.path.join(d, "llvm-probes.json")

def probe(arch:str, lib:str|None=None) -> Probe:
  """Whether tinygrad's LLVM compiler builds a kernel for `arch` with libLLVM `lib` (None: tinygrad's own choice).
  Remembered per process and on disk (MOCKGPU_CACHE_DIR), keyed by the installed libLLVM files."""
  import json
  from mockgpu import config
  key = _probe_key(arch, lib)
  if (hit := _probes.get(key)) is not None: return hit
  path, disk = _probe_cache_file(), {}
  if path is not None:
    try:
      with open(path) as f: disk = json.load(f)
    except (OSError, ValueError): disk = {}  # none yet, or torn: probe again
  if isinstance(disk.get(key), dict): _probes[key] = Probe(**disk[key])
  else:
    _probes[key] = _run_probe(arch, lib)
    if path is not None:
      try:
        config.publish(path, lambda f: json.dump({**disk, key: vars(_probes[key])}, f))
      except OSError: pass  # a read-only cache only means probing again
  return _probes[key]

def llvm_compiles_for(arch:str) -> tuple[bool, str]:
  """Whether tinygrad's own libLLVM choice compiles for `arch`, and why not."""
  p = probe(arch)
  return p.ok, p.why

@dataclass(frozen=True)
class LLVMChoice:
  arch: str
  lib: str|None    # the libLLVM that compiles for arch, None when no installed one does
  rebound: bool    # True: not tinygrad's own choice, so bind_llvm points LLVM_PATH at it
  detail: str

def llvm_for(arch:str) -> LLVMChoice:
  """The libLLVM a process compiling for `arch` should load: tinygrad's own choice when it compiles for arch, else the
  oldest installed newer one that does (then older ones), else none, with what to install."""
  if user := os.environ.get("LLVM_PATH"):  # the user's (or the parent process's) choice is what tinygrad loads
    p = probe(arch, user)
    return LLVMChoice(arch, user if p.ok else None, False, f"LLVM {llvm_major(user) or '?'} ({user}), from LLVM_PATH" if p.ok else
                      f"LLVM_PATH={user}: {p.why}: {LLVM_NEWER_HINT}")
  own = probe(arch)
  if own.ok: return LLVMChoice(arch, own.lib, False, f"LLVM {llvm_major(own.lib or '') or '?'} ({own.lib}), tinygrad's own choice")
  own_major = llvm_major(own.lib or "") or 0
  others = sorted(((m, lib) for m, lib in installed_llvms().items() if m != own_major), key=lambda ml: (ml[0] < own_major, ml[0]))
  for major, lib in others:
    if probe(arch, lib).ok:
      return LLVMChoice(arch, lib, True, f"LLVM {major} ({lib}), which mockgpu sets as LLVM_PATH (tinygrad's own LLVM {own_major or '?'}: {own.why})")
  return LLVMChoice(arch, None, False, f"no installed LLVM compiles for it ({own.why}): {LLVM_NEWER_HINT}")

named_own:str|None = None  # the LLVM_PATH bind_llvm set to tinygrad's own choice, until forget_own_llvm removes it

def forget_own_llvm(module=None):
  """Once tinygrad has loaded libLLVM: removes the LLVM_PATH bind_llvm set to tinygrad's own choice (not a choice the
  process's children should inherit), unless something else has set it since."""
  global named_own
  if named_own is not None and os.environ.get("LLVM_PATH") == named_own: del os.environ["LLVM_PATH"]
  named_own = None

def bind_llvm(arch:str) -> str|None:
  """Before tinygrad loads libLLVM in a process that compiles for `arch`: sets LLVM_PATH to the libLLVM llvm_for
  chose. When that is tinygrad's own choice (the probe saw tinygrad load it), naming it changes nothing tinygrad loads
  but spares its search: DLL.findlib takes an LLVM_PATH that names a file as is, and otherwise matches a regular
  expression against each of the ~1100 files of the library directories for each of its nine names (~25 ms of every
  AMD process). That one is removed again once tinygrad has loaded libLLVM (forget_own_llvm, armed by mockgpu._finder),
  so that a child process for another board (gfx950) does not inherit it as a choice. LLVM_PATH already set (by the
  user, or inherited from the process that bound it) is left alone, as is a libLLVM tinygrad loaded already. Returns
  the LLVM_PATH now in force."""
  if os.environ.get("LLVM_PATH"): return os.environ["LLVM_PATH"]
  if (tllvm := sys.modules.get("tinygrad.runtime.autogen.llvm")) is not None:  # too late to choose: say if it cannot work
    if (loaded := getattr(tllvm.dll, "_name", None)) and not (p := probe(arch, loaded)).ok:
      log.warning("tinygrad loaded %s before the MOCK interface was imported, and it cannot compile for %s (%s): %s",
                  loaded, arch, p.why, llvm_for(arch).detail)
    return None
  choice = llvm_for(arch)
  if choice.rebound and choice.lib is not None:
    log.info("%s: %s", arch, choice.detail)
    os.environ["LLVM_PATH"] = choice.lib
  elif choice.lib is not None and os.path.isfile(choice.lib):  # tinygrad's own: spares its search
    global named_own
    os.environ["LLVM_PATH"] = named_own = choice.lib
  elif choice.lib is None: log.warning("DEV=MOCK+AMD cannot compile for %s: %s", arch, choice.detail)
  return os.environ.get("LLVM_PATH")

# *** llvm-objdump for DEBUG=7 ***
# tinygrad (helpers._find_llvm_objdump) disassembles AMD kernels with the first of /opt/rocm/llvm/bin/llvm-objdump,
# llvm-objdump-21, llvm-objdump-20, llvm-objdump on PATH. Debian's plain llvm-objdump is LLVM 14, which crashes (SIGSEGV)
# on tinygrad's gfx11 objects, and gfx950 objects need LLVM 20 or newer (Debian 12: llvm-19 and llvm-22). The seam is
# PATH: a directory holding `llvm-objdump-20`, a link to the newest /usr/lib/llvm-N/bin/llvm-objdump (N >= 15), goes
# first on it; nothing is done when tinygrad would find one of its own. The link is re-pointed when a newer LLVM was
# installed since it was made (the directory is shared by every process of the user).
OBJDUMP_MIN = 15

def newest_llvm_objdump(root:str="/usr/lib") -> str|None:
  found = sorted((int(m.group(1)), os.path.join(root, d, "bin", "llvm-objdump")) for d in (os.listdir(root) if os.path.isdir(root) else [])
                 if (m := re.fullmatch(r"llvm-(\d+)", d)) and os.path.exists(os.path.join(root, d, "bin", "llvm-objdump")))
  return found[-1][1] if found and found[-1][0] >= OBJDUMP_MIN else None

def objdump_shim_dir() -> str:
  import tempfile
  return os.path.join(tempfile.gettempdir(), f"mockgpu-objdump-{os.getuid()}")

def bind_llvm_objdump() -> str|None:
  """Puts a usable llvm-objdump where tinygrad looks (see above) when DEBUG>=7 asks for disassembly; returns its path."""
  import shutil
  if int(os.environ.get("DEBUG", "0") or 0) < 7: return None
  shim, path = objdump_shim_dir(), os.environ.get("PATH", "").split(os.pathsep)
  others = os.pathsep.join(p for p in path if p != shim)
  if any(shutil.which(p, path=others) for p in ("/opt/rocm/llvm/bin/llvm-objdump", "llvm-objdump-21", "llvm-objdump-20")): return None
  if (real := newest_llvm_objdump()) is None:
    log.warning("DEBUG=7: no llvm-objdump >= %d found; tinygrad's llvm-objdump may crash: install llvm-%d (apt-get install llvm-%d)",
                OBJDUMP_MIN, LLVM_TESTED, LLVM_TESTED)
    return None
  os.makedirs(shim, exist_ok=True)
  link = os.path.join(shim, "llvm-objdump-20")
  if os.path.realpath(link) != os.path.realpath(real):  # missing, or made before a newer LLVM was installed
    os.symlink(real, tmp := f"{link}.{os.getpid()}")
    os.replace(tmp, link)  # atomic: another process may be running the old link
  if shim not in path: os.environ["PATH"] = shim + os.pathsep + os.environ.get("PATH", "")
  return real
