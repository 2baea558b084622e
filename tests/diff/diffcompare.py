"""How the differential suite compares a mock device's outputs with DEV=CPU's, and runs cases on a pool of workers."""
from __future__ import annotations
import os, pickle, shutil, subprocess, sys, tempfile
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# (mantissa bits, smallest normal exponent) of each float type: an ulp at a magnitude is 2**(exponent - mantissa bits)
FLOAT_FORMAT = {"float16": (10, -14), "bfloat16": (7, -126), "float32": (23, -126), "float64": (52, -1022),
                "fp8e4m3": (3, -6), "fp8e5m2": (2, -14), "fp8e4m3fnuz": (3, -7), "fp8e5m2fnuz": (2, -15)}
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}

def decode(out):
  """A worker's output: ("float", dtype name, bits, float64 values) or ("exact", dtype name, values)."""
  if out[0] != "tensor": return out
  _, name, fmt, shape, raw = out
  if name in FLOAT_FORMAT:
    bits = np.frombuffer(raw, BITS.get(name, np.uint8)).reshape(shape)
    return ("float", name, bits, to_float64(bits, name))
  return ("exact", name, np.frombuffer(raw, np.dtype(fmt)).reshape(shape))

def to_float64(bits:np.ndarray, name:str) -> np.ndarray:
  if name == "bfloat16": return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
  if name in ("float16", "float32", "float64"): return bits.view(name).astype(np.float64)
  from tinygrad import dtypes
  from tinygrad.dtype import fp8_to_float
  table = np.array([fp8_to_float(i, getattr(dtypes, name)) for i in range(256)])
  return table[bits]

def ulp(ref:np.ndarray, name:str) -> np.ndarray:
  mant, emin = FLOAT_FORMAT[name]
  with np.errstate(divide="ignore"): e = np.floor(np.log2(np.abs(ref)))
  return np.exp2(np.maximum(np.nan_to_num(e, neginf=emin), emin) - mant)

def same_bits(a:tuple, b:tuple, zero_sign:bool=True) -> np.ndarray:
  """Elementwise: the same bits, or both NaN (IEEE leaves a generated NaN's payload open; x86 and GPUs differ), or
  both zero when the zero's sign is not defined (`zero_sign` False)."""
  if a[2].shape != b[2].shape: return np.zeros(1, bool)
  return (a[2] == b[2]) | (np.isnan(a[3]) & np.isnan(b[3])) | (not zero_sign and (a[3] == 0) & (b[3] == 0))

# Ops whose tinygrad formula LLVM may fold under `nsz` to a zero of either sign (x*0, x-x, x+0 folded away): on the
# configurations with tinygrad's LLVM renderer (MOCK+AMD's and the boards') their zero results' sign is not defined.
NSZ_OPS:set[str] = set()
def zero_sign_defined(dev:str, case:dict) -> bool:
  """tinygrad's LLVM renderer (MOCK+AMD's) marks every float operation `nsz` (no signed zeros), so LLVM may fold
  x*0 or x-x to either zero: the sign of a zero result is not defined by the program, on hardware as here. Only for
  the ops in NSZ_OPS, where that folding was seen."""
  return "AMD" not in dev.split(":")[0] or case["op"] not in NSZ_OPS

def flushed(g:tuple, w:tuple) -> np.ndarray:
  """Where the reference is a zero and the mock's result a subnormal of the same format, or the reference the largest
  finite value and the mock's an infinity of the same sign (tinygrad's integer lowering saturates what it rounds)."""
  mant, emin = FLOAT_FORMAT[g[1]]
  table = to_float64(np.arange(256, dtype=np.uint8), g[1]) if g[1] not in BITS else None
  largest = np.nanmax(np.abs(np.where(np.isfinite(table), table, 0))) if table is not None else np.inf
  return ((w[3] == 0) & (np.abs(g[3]) < 2.0 ** emin)) | (np.isinf(g[3]) & (np.abs(w[3]) == largest) & (np.sign(g[3]) == np.sign(w[3])))

def compare(got, want, ref, spec, zero_sign:bool=True, flush:set=frozenset(), cond:np.ndarray|None=None) -> str|None:
  """None when `got` (the mock's output) agrees with `want` (CPU's): exactly, or within `spec`'s bound: per element,
  beyond CPU's own distance from the float64 reference `ref`, `spec["ulps"]` ulps of that element's scale
  max(|ref|, `cond`) (`cond`: the element's condition and floor, tests/diff/diffcases.py `ulps`, required where the bound
  names one). Otherwise a description of the difference."""
  g, w = decode(got), decode(want)
  if g[0] == "py" or w[0] == "py": return None if g == w else f"{summary(g)} != {summary(w)}"
  if g[1] != w[1]: return f"dtype {g[1]} != {w[1]}"
  if g[0] == "exact":
    if g[2].shape != w[2].shape: return f"shape {g[2].shape} != {w[2].shape}"
    bad = g[2] != w[2]
    return None if not bad.any() else describe(bad, g[2], w[2])
  ok = same_bits(g, w, zero_sign)
  # tinygrad's integer lowering of a dtype the CPU has no type for (fp8 on DEV=CPU) flushes its subnormals and
  # saturates infinities on every load and store; a GPU with the type in hardware moves the bits (and its cvt rounds
  # to subnormals): `flush` names those dtypes
  if g[1] in flush and g[2].shape == w[2].shape: ok = ok | flushed(g, w)
  if ok.all(): return None
  if g[2].shape != w[2].shape: return f"shape {g[2].shape} != {w[2].shape}"
  if spec is None or ref is None: return describe(~ok, g[3], w[3], "bitwise")
  r = decode(ref)[3].astype(np.float64)
  if r.shape != g[3].shape: return f"reference shape {r.shape} != {g[3].shape}"
  if (spec["cond"] or spec["floor"] is not None) and cond is None: return f"the bound ({spec['why']}) names a condition and none was given"
  mag = np.abs(r) if cond is None else np.maximum(np.abs(r), np.broadcast_to(cond, r.shape))
  scale = ulp(mag, g[1])
  with np.errstate(invalid="ignore"):
    err_got, err_cpu = np.abs(g[3] - r) / scale, np.abs(w[3] - r) / scale
    within = ok | (np.isfinite(r) & (err_got <= err_cpu + spec["ulps"]))
  if within.all(): return None
  i = tuple(np.argwhere(~within)[0])
  return (f"{int((~within).sum())} of {within.size} elements beyond {spec['ulps']} ulps of their own scale ({spec['why']}); first at "
          f"{list(i)}: got {g[3][i]!r} want {w[3][i]!r} ref {r[i]!r} scale {mag[i]!r} ({err_got[i]:.1f} ulps vs CPU's {err_cpu[i]:.1f})")

def finite_abs(a:np.ndarray) -> np.ndarray:
  """|a| where finite, else 0: an overflowing condition widens nothing."""
  with np.errstate(invalid="ignore"): return np.where(np.isfinite(a), np.abs(a), 0)

def condition(case:dict, spec:dict, ref:tuple, runs:dict[str, tuple]) -> np.ndarray:
  """One output's condition per element (tests/diff/diffcases.py `ulps`): `ref` is its float64 reference output, `runs` the
  same output of the "abs" and "slope" reference runs the spec names."""
  from diffcases import SLOPE_STEP
  r = decode(ref)[3]
  c = np.zeros(r.shape)
  if "abs" in runs: c = np.maximum(c, finite_abs(decode(runs["abs"])[3]))
  if "slope" in runs:
    with np.errstate(invalid="ignore", over="ignore"): c = np.maximum(c, finite_abs((decode(runs["slope"])[3] - r) / SLOPE_STEP))
  if spec["floor"] == 1: c = np.maximum(c, 1.0)
  elif spec["floor"] == "arg": c = np.maximum(c, np.maximum(input_magnitude(case, r.shape), 1.0))
  elif spec["floor"] == "norm": c = np.maximum(c, max((np.linalg.norm(a) for a in float_inputs(case)), default=0.0))
  return c

def float_inputs(case:dict) -> list[np.ndarray]:
  """The case's float inputs as float64, after their views (numpy's reading of tests/diff/diffcases.py apply_view)."""
  from diffcases import make_array, FLOATS, FP8
  out = []
  for shape, dtype, domain, seed, view in case["x"]:
    if dtype not in FLOATS + FP8: continue
    a = make_array(shape, dtype, domain, seed).astype(np.float64)
    if view == "T": a = a.transpose()
    elif view == "pad": a = np.pad(a, 1)
    elif view == "stride": a = a[::2]
    elif view == "flip": a = a[::-1]
    elif view == "expand": a = np.broadcast_to(a, tuple(4 if s == 1 else s for s in a.shape))
    out.append(a)
  return out

def input_magnitude(case:dict, shape:tuple) -> np.ndarray:
  """Per element of an output of `shape`, the largest magnitude among the inputs it is computed from: the
  broadcast of the viewed inputs where the op is elementwise; a gradient has its leaf's shape; else the largest input."""
  xs = [finite_abs(a) for a in float_inputs(case)]
  if not xs: return np.zeros(shape)
  try:
    if np.broadcast_shapes(*(a.shape for a in xs)) == tuple(shape): return np.maximum.reduce([np.broadcast_to(a, shape) for a in xs])
  except ValueError: pass
  return np.full(shape, max(a.max(initial=0) for a in xs))

def describe(bad, g, w, how=""):
  i = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
  return f"{int(bad.sum())} of {bad.size} elements differ{' ' + how if how else ''}, first at {list(i)}: {g[i]!r} != {w[i]!r}"

def summary(x): return repr(x)[:200]

def upcast(case:dict) -> dict:
  """The case's float64 reference: the same input values, every float input as float64."""
  return {**case, "id": case["id"] + "@f64", "upcast": True}

# *** the worker pool ***
def reference_env() -> dict:
  """DEV=CPU compiles with clang; clang before 17 has no __bf16 for tinygrad's freestanding x86 target, so the
  reference uses the newest clang installed (scripts/install.sh installs clang-19)."""
  for cc in ("clang-19", "clang-18", "clang-17", "clang"):
    if shutil.which(cc): return {"CC": cc}
  return {}

class Runner:
  """One long-lived tests/diff/diffrunner.py process for a device configuration; restarted after an error or a crash."""
  def __init__(self, dev:str, env:dict|None=None): self.dev, self.env, self.proc, self._emulated = dev, env or {}, None, None
  def start(self):
    self.log = tempfile.TemporaryFile()
    self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "diffrunner.py")], env={**os.environ, "DEV": self.dev, **self.env},
                                 cwd=HERE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
    try: hello = pickle.load(self.proc.stdout)
    except (EOFError, pickle.UnpicklingError):
      self.proc.wait()
      self.log.seek(0)
      raise RuntimeError(f"the DEV={self.dev} worker did not start:\n" + self.log.read().decode(errors="replace")[-6000:]) from None
    self._emulated = set(hello[1])
  @property
  def emulated(self) -> set[str]:
    """The dtypes this device's renderer lowers to integer code."""
    if self._emulated is None: self.start()
    return self._emulated
  def submit(self, cases:list):
    if self.proc is None or self.proc.poll() is not None: self.start()
    pickle.dump(cases, self.proc.stdin)
    self.proc.stdin.flush()
  def collect(self, n:int) -> list:
    """Up to n replies; fewer when the worker stopped (after an error reply, or crashing: then a reply says so)."""
    replies = []
    while len(replies) < n:
      try: replies.append(pickle.load(self.proc.stdout))
      except (EOFError, pickle.UnpicklingError):
        self.proc.wait()
        self.log.seek(0)
        replies.append(("error", "WorkerDied",
                        f"the DEV={self.dev} worker died (exit {self.proc.returncode}):\n" + self.log.read().decode(errors="replace")[-6000:]))
        self.proc = None
        return replies
      if replies[-1][0] == "error":
        self.proc.wait()
        self.proc = None
        return replies
    return replies
  def close(self):
    stop(self.proc)
    self.proc = None

def stop(proc):
  """End a worker: close its stdin (it exits at EOF), and kill it if it does not within 10 s."""
  if proc is not None and proc.poll() is None:
    proc.stdin.close()
    try: proc.wait(timeout=10)
    except subprocess.TimeoutExpired: proc.kill()

def run_everywhere(runners:dict[str, Runner], cases:list) -> dict[str, list]:
  """Every case on every runner: the runners work at the same time; each restarts past an error."""
  pending = {name: list(cases) for name in runners}
  results:dict[str, list] = {name: [] for name in runners}
  while pending:
    for name, cs in pending.items(): runners[name].submit(cs)
    for name, cs in list(pending.items()):
      got = runners[name].collect(len(cs))
      results[name] += got
      if len(got) < len(cs): pending[name] = cs[len(got):]
      else: del pending[name]
  return results
