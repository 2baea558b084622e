"""The stencil tier (emulators/rdna/stencil.py, backends/stencil.py) gives the numpy path's bits: real tinygrad kernels
run both ways, the stencil way after its handler library was built from their templates; a kernel with a template the
library lacks runs on numpy and is queued, then runs on the tier once the batch is built; faults and the budget stop
as on the C tier."""
from __future__ import annotations
import os
import numpy as np
import pytest
from tinygrad import dtypes
from tinygrad.renderer.amd.dsl import v, s
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler import native as cnative
from mockgpu.compiler.rdna.backends import stencil as backend
from mockgpu.emulators.rdna import stencil
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded
from support.rdna_harness import cpu, run_mock

F = lambda rng, *shape: rng.standard_normal(shape).astype(np.float32) * 4
N = lambda rng, lo, hi, *shape, dt=np.int32: rng.integers(lo, hi, shape).astype(dt)

KERNELS = {
  "elementwise": lambda r: (cpu(F(r, 1000)) * cpu(F(r, 1000)) + 1).exp2(),
  "sum_rows": lambda r: cpu(F(r, 64, 200)).sum(axis=1),
  "softmax": lambda r: cpu(F(r, 16, 100)).softmax(axis=-1),
  "matmul": lambda r: cpu(F(r, 48, 40)) @ cpu(F(r, 40, 24)),
  "conv2d": lambda r: cpu(F(r, 1, 3, 12, 12)).conv2d(cpu(F(r, 4, 3, 3, 3)), padding=1),
  "int_math": lambda r: (cpu(N(r, -1000, 1000, 500)) * 7 // 3 + cpu(N(r, -50, 50, 500)) % 5) << 2,
  "casts": lambda r: cpu(F(r, 300) * 100).cast(dtypes.int32).cast(dtypes.float32) + cpu(N(r, 0, 9, 300, dt=np.int8)).cast(dtypes.float32),
  "int64": lambda r: cpu(N(r, -2**40, 2**40, 200, dt=np.int64)) * 3 + 1,
  "half_casts": lambda r: (cpu(F(r, 500)).cast(dtypes.half) + cpu(F(r, 500)).cast(dtypes.half)).maximum(0).cast(dtypes.float32),
  "float64": lambda r: (cpu(F(r, 100).astype(np.float64)) * cpu(F(r, 100).astype(np.float64))).maximum(cpu(F(r, 100).astype(np.float64))),
  "cumsum": lambda r: cpu(F(r, 200)).cumsum(),
  "argmax": lambda r: cpu(F(r, 30, 50)).argmax(axis=1),
}

@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
  """No wait of the build thread for more templates; no kernel entries from another test's library (a process has one
  cache directory: an entry keeps the handlers it found)."""
  from mockgpu.emulators.rdna import executor
  monkeypatch.setattr(stencil, "GATHER", 0.0)
  monkeypatch.setattr(executor, "_stencils", {})

@pytest.fixture(scope="module")
def library_dir(tmp_path_factory):
  """One handler library for the module's kernels (its builds are the slow part)."""
  return str(tmp_path_factory.mktemp("stencil"))

def _mode(monkeypatch, cache:str, on:bool):
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", cache)
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "1" if on else "0")
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "auto" if on else "0")  # the stencil tier is auto's
  monkeypatch.setenv("MOCKGPU_CC_COST", "1e9")   # and no kernel's own C build
  monkeypatch.setenv("MOCKGPU_CC_HISTORY", "0")

def _run(name:str, request):
  rng = np.random.default_rng(abs(hash(request.node.nodeid)) % 2**32)
  return run_mock(KERNELS[name](rng))

def _bits(x) -> np.ndarray: return np.atleast_1d(x).view(np.uint8)

@pytest.mark.parametrize("name", KERNELS)
def test_kernel_same_bits_on_numpy_and_stencil(name, library_dir, monkeypatch, request):
  _mode(monkeypatch, library_dir, False)
  want, want_stats = _run(name, request)
  _mode(monkeypatch, library_dir, True)
  _run(name, request)      # queues the templates the library lacks (the kernels run on numpy meanwhile)
  cnative.wait()           # the batch build
  got, got_stats = _run(name, request)
  assert not any(st.stencil for st in want_stats)
  assert all(st.stencil for st in got_stats), f"{name}: a kernel stayed off the stencil tier"
  assert [st.wave_instructions for st in got_stats] == [st.wave_instructions for st in want_stats]
  np.testing.assert_array_equal(_bits(got), _bits(want))

def test_unknown_template_runs_on_numpy_then_on_the_tier(tmp_path, monkeypatch, request):
  """A fresh library: the first dispatch runs on numpy and queues its templates; after the batch build, a dispatch of
  the same kernel runs on the tier, from the batch another process would load too (its index lists the handlers)."""
  _mode(monkeypatch, str(tmp_path), True)
  want, first = _run("elementwise", request)
  assert not any(st.stencil for st in first)
  queued = os.listdir(os.path.join(stencil.directory(), "src"))
  assert queued and all(f.startswith("w32-") and f.endswith(".c") for f in queued)
  cnative.wait()
  got, second = _run("elementwise", request)
  assert all(st.stencil for st in second)
  np.testing.assert_array_equal(_bits(got), _bits(want))
  libs = os.path.join(stencil.directory(), "lib")
  indexed = {n for f in os.listdir(libs) if f.endswith(".idx") for n in open(os.path.join(libs, f)).read().split()}
  assert {f[4:-2] for f in queued} <= indexed

def test_batches_merge_and_another_process_loads_them(tmp_path, monkeypatch, request):
  """Past MAX_BATCHES batches, the smaller half is built again as one; a process that starts afterwards (a fresh
  Library) finds every kernel's handlers, and the kernels give the same bits."""
  monkeypatch.setattr(stencil, "MAX_BATCHES", 2)
  _mode(monkeypatch, str(tmp_path), True)
  names = ["elementwise", "int_math", "sum_rows", "casts"]
  want = {}
  for name in names:
    want[name], _ = _run(name, request)
    cnative.wait()
  assert len(stencil._batches(stencil.directory(), 32)) <= 2
  from mockgpu.emulators.rdna import executor
  monkeypatch.setattr(stencil, "library", stencil.Library())
  monkeypatch.setattr(executor, "_stencils", {})
  for name in names:
    got, stats = _run(name, request)
    assert all(st.stencil for st in stats), name
    np.testing.assert_array_equal(_bits(got), _bits(want[name]))

def test_template_takes_registers_constants_and_targets_out():
  text = "V(3)[l] = F32(V(12)[l]) + s[7] + 0x3f800000u + 16ull + 1u;\nSET_MASK(106, x); gload(c, t_, a_, 4, 1, PCV);\ngoto B2;"
  tmpl, params, vregs, sregs = backend.template(text)
  assert tmpl == ("V(P[1])[l] = F32(V(P[2])[l]) + s[P[3]] + ((uint32_t)P[4]) + ((uint64_t)P[5]) + 1u;\n"
                  "SET_MASK(P[6], x); gload(c, t_, a_, 4, 1, P[0]);\nreturn 1 + P[7];")
  assert params == [3, 12, 7, 0x3f800000, 16, 106, 2]
  assert (vregs, sregs) == ([3, 12], [7, 106])
  assert backend.template("uint32_t r_d_2 = fma32(x, y, z);")[1] == []   # names and sizes are not operands
  from mockgpu.compiler.rdna.backends.c import PRELUDE
  assert stencil._prelude() == PRELUDE   # read without importing the backend, and the same text

def _stop(fn) -> str:
  """fn()'s named stop: its type and message."""
  with pytest.raises((GPUPageFault, InstructionBudgetExceeded)) as e: fn()
  return f"{type(e.value).__name__}: {e.value}"

def _runner(body):
  """A dispatch of body (support/rdna_isa.py's kernel conventions) from the same code and arguments at each call."""
  import struct
  import support.rdna_isa as isa
  from support.rdna_harness import aligned
  from mockgpu.memory import AddressSpace
  from mockgpu.emulators.rdna import Dispatch, run_dispatch
  code = b"".join(i.to_bytes() for i in body)
  img, args, out, inp = aligned(4096), aligned(256, 256), aligned(128, 256), aligned(16, 256)
  img[:len(code)] = np.frombuffer(code, np.uint8)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
  mem = AddressSpace("stencil")
  for a in (img, args, out, inp): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  run = lambda xcc=(0, 1, 1): run_dispatch(mem, Dispatch("rdna3", img.ctypes.data, isa.RSRC1, isa.RSRC2, 0, user, 0, 0, (32, 1, 1), (1, 1, 1),
                                                        True, xcc=xcc))
  run.keep, run.pgm, run.code = (img, args, out, inp), img.ctypes.data, code
  return run

def _c_and_stencil(monkeypatch, tmp_path, fn) -> dict[str, str]:
  """fn's stop on the C tier, then on the stencil tier (after a first run queued its templates and they were built)."""
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "0")
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "1")
  got = {"c": _stop(fn)}
  _mode(monkeypatch, str(tmp_path), True)
  _stop(fn)
  cnative.wait()
  got["stencil"] = _stop(fn)
  from mockgpu.emulators.rdna import executor
  ran = [e.k is not None for key, e in executor._stencils.items() if key[1] == fn.pgm and fn.code.startswith(e.code)]
  assert ran and all(ran), "not on the stencil tier"
  return got

def test_fault_and_budget_stop_as_on_the_c_tier(tmp_path, monkeypatch):
  """A store past every mapping stops with the C tier's GPUPageFault (address, instruction, wave); an endless loop with
  its InstructionBudgetExceeded."""
  import support.rdna_isa as isa
  far = isa.kernel(isa.tid_times4(), I.v_mov_b32_e32(v[2], 7), I.v_add_nc_u32_e32(v[1], 0x7ff00000, v[1]), isa.store(v[2]), I.s_endpgm())
  got = _c_and_stencil(monkeypatch, tmp_path, _runner(far))
  assert got["stencil"] == got["c"] and "GPUPageFault" in got["c"] and "global_store_b32 at PC" in got["c"]
  monkeypatch.setenv("MOCKGPU_BUDGET", "5000")
  loop = isa.kernel(I.s_mov_b32(s[8], 0), I.s_add_u32(s[8], s[8], 1), I.s_branch(simm16=-2), I.s_endpgm())
  got = _c_and_stencil(monkeypatch, tmp_path, _runner(loop))
  assert got["stencil"] == got["c"] and "InstructionBudgetExceeded" in got["c"]

def test_memo_gives_the_same_record(monkeypatch):
  """An instruction's template remembered from an earlier kernel of the process (backends/stencil.py MEMO) is the one
  translating it again gives: the same record."""
  import support.rdna_isa as isa
  from mockgpu.compiler.rdna import decode
  body = isa.kernel(isa.tid_times4(), I.v_mov_b32_e32(v[2], 7), I.v_fma_f32(v[3], v[2], 2.0, v[1]), I.s_add_u32(s[8], s[8], 3),
                    isa.store(v[3]), I.s_endpgm())
  code = b"".join(i.to_bytes() for i in body)
  blocks = lambda: decode.blocks(decode.walk(code, "rdna3"))
  monkeypatch.setattr(backend, "MEMO", {})
  fresh = backend.record(blocks(), False, False, "rdna3", 32)
  assert backend.MEMO and fresh[0] == "ok"
  assert backend.record(blocks(), False, False, "rdna3", 32) == fresh

WORK = """
import hashlib, json
from tinygrad import Tensor, dtypes
from mockgpu.compiler import native
from mockgpu.emulators.rdna import executor
def work():
  Tensor.manual_seed(0)
  a, b = Tensor.rand(64, 64).realize(), Tensor.rand(64, 64).realize()
  outs = [a @ b, a.softmax(axis=1), (a * 3 + b).cast(dtypes.half), a.max(axis=0), (a * 1000).cast(dtypes.int32) // 7]
  return [hashlib.sha256(o.numpy().tobytes()).hexdigest() for o in outs]
first = work()
native.wait()
print(json.dumps({"first": first, "second": work(), "on_tier": [e.k is not None for e in executor._stencils.values()]}))
"""

@pytest.mark.parametrize("board", ["gfx1201", "gfx942"])
def test_rdna4_and_wave64_kernels_same_bits(board, tmp_path):
  """RDNA4 (gfx1201) and CDNA3's wave64 (gfx942) through tinygrad: the stencil tier's results are the numpy path's."""
  import json
  from conftest import run_tinygrad
  env = {"MOCKGPU_CACHE_DIR": str(tmp_path), "MOCKGPU_CC_COST": "1e9", "MOCKGPU_CC_HISTORY": "0", "MOCKGPU_RDNA_NATIVE": "auto"}
  run = lambda on: json.loads(run_tinygrad(f"MOCK+AMD:LLVM:{board}", WORK, env={**env, "MOCKGPU_RDNA_STENCIL": on}).stdout.splitlines()[-1])
  numpy, tier = run("0"), run("1")
  assert numpy["on_tier"] == [] and tier["on_tier"] and all(tier["on_tier"])
  assert tier["first"] == tier["second"] == numpy["first"]

def test_lock_of_a_dead_builder_is_taken_over(tmp_path, monkeypatch, request):
  """A build lock whose process is gone (killed mid-build) does not stop later builds; a live one does."""
  import subprocess, sys
  _mode(monkeypatch, str(tmp_path), True)
  os.makedirs(stencil.directory())
  lock = os.path.join(stencil.directory(), "build.lock")
  with open(lock, "w") as f: f.write(str(os.getpid()))   # a live builder: this build waits for it
  want, _ = _run("int_math", request)
  cnative.wait()
  assert not any(st.stencil for st in _run("int_math", request)[1])
  dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
  with open(lock, "w") as f: f.write(dead)
  stencil.library.request()
  cnative.wait()
  got, stats = _run("int_math", request)
  assert all(st.stencil for st in stats) and not os.path.exists(lock)
  np.testing.assert_array_equal(_bits(got), _bits(want))

def test_auto_counts_launches_not_their_xcc_shares(tmp_path, monkeypatch):
  """A launch shared by eight XCCs (gfx942) is eight dispatches, one per share: with no library here yet, a kernel
  launched once still makes no stencil record (its shares on XCCs 1-7 are not second launches), one launched twice does,
  at its second launch's share on XCC 0."""
  import support.rdna_isa as isa
  from mockgpu.emulators.rdna import executor
  monkeypatch.setattr(executor, "_programs", {})
  _mode(monkeypatch, str(tmp_path), True)
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "auto")
  monkeypatch.setattr(stencil, "library", stencil.Library())
  monkeypatch.setattr(stencil, "BUILD_COST", (1e9, 0.0))
  body = isa.kernel(isa.tid_times4(), I.v_mov_b32_e32(v[2], 5), I.v_add_f32_e32(v[3], v[2], v[1]), isa.store(v[3]), I.s_endpgm())
  run, src = _runner(body), os.path.join(stencil.directory(), "src")
  launch = lambda: [run((x, 8, 1)) for x in range(8)]
  assert sum(st.waves for st in launch()) == 1 and not os.path.isdir(src)   # the one workgroup ran, on numpy, and nothing was queued
  key = next(k for k in executor._programs if k[1] == run.pgm)
  assert key not in executor._stencils
  launch()
  cnative.wait()
  assert key in executor._stencils and os.listdir(src)

def test_auto_builds_the_library_once_the_numpy_path_has_paid_for_it(tmp_path, monkeypatch):
  """MOCKGPU_RDNA_STENCIL=auto (the default): on a machine with no library yet a kernel makes its stencil record at its
  second dispatch; one whose handlers are missing queues their templates, but they are built only once the numpy seconds
  spent on waiting kernels reach the build's estimate (ski rental, as the C tier's)."""
  import support.rdna_isa as isa
  from mockgpu.emulators.rdna import executor
  monkeypatch.setattr(executor, "_programs", {})   # no earlier dispatch at this code's address (an earlier test's buffer)
  _mode(monkeypatch, str(tmp_path), True)
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "auto")
  monkeypatch.setattr(stencil, "library", stencil.Library())
  monkeypatch.setattr(stencil, "BUILD_COST", (1e9, 0.0))   # a build no dispatch repays
  body = isa.kernel(isa.tid_times4(), I.v_mov_b32_e32(v[2], 7), I.v_fma_f32(v[3], v[2], 2.0, v[1]), isa.store(v[3]), I.s_endpgm())
  run = _runner(body)
  src = os.path.join(stencil.directory(), "src")
  first = run()
  assert not os.path.isdir(src)   # no library here yet: a kernel dispatched once makes no record and queues nothing
  again = run()
  cnative.wait()
  assert not first.stencil and not again.stencil
  assert os.listdir(src) and not os.path.isdir(os.path.join(stencil.directory(), "lib"))
  assert stencil.library.waiting and stencil.library.rent > 0
  want = run.keep[2].copy()
  monkeypatch.setattr(stencil, "BUILD_COST", (0.0, 0.0))   # now the next dispatch's seconds pay for it
  run.keep[2][:] = 0
  assert not run().stencil
  cnative.wait()
  run.keep[2][:] = 0
  assert run().stencil and not stencil.library.waiting
  np.testing.assert_array_equal(run.keep[2], want)
