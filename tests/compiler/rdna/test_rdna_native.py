"""The RDNA executor's two paths, numpy (every wave at once) and native (hot kernels translated to C, one wave at a
time), give the same bits: on real tinygrad kernels, and on single instructions over special float values. The
hand-assembled suites (test_rdna_isa/valu/fast/kernels) also run on both paths (conftest's rdna_path fixture)."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import dtypes
from tinygrad.renderer.amd.dsl import v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler.rdna.backends.c import c_rows
from mockgpu.compiler.rdna.semantics.lang import free_names
from mockgpu.compiler.rdna.semantics import rdna3 as sem
from support.rdna_harness import cpu, run_mock
from support.rdna_valu import run_op

rng = np.random.default_rng(11)
F = lambda *shape: rng.standard_normal(shape).astype(np.float32) * 4
N = lambda lo, hi, *shape, dt=np.int32: rng.integers(lo, hi, shape).astype(dt)

KERNELS = {
  "elementwise": lambda: (cpu(F(1000)) * cpu(F(1000)) + 1).exp2(),
  "sqrt_recip_log": lambda: (cpu(F(300)).abs() + 0.5).sqrt().reciprocal().log2(),
  "sum_rows": lambda: cpu(F(64, 200)).sum(axis=1),
  "sum_all": lambda: cpu(F(5000)).sum(),
  "max_reduce": lambda: cpu(F(37, 29)).max(axis=0),
  "softmax": lambda: cpu(F(16, 100)).softmax(axis=-1),
  "matmul": lambda: cpu(F(48, 40)) @ cpu(F(40, 24)),
  "conv2d": lambda: cpu(F(1, 3, 12, 12)).conv2d(cpu(F(4, 3, 3, 3)), padding=1),
  "int_math": lambda: (cpu(N(-1000, 1000, 500)) * 7 // 3 + cpu(N(-50, 50, 500)) % 5) << 2,
  "uint8_where": lambda: (cpu(N(0, 255, 400, dt=np.uint8)).cast(dtypes.int32) > 100).where(cpu(F(400)), cpu(F(400)) * 2),
  "casts": lambda: cpu(F(300) * 100).cast(dtypes.int32).cast(dtypes.float32) + cpu(N(0, 9, 300, dt=np.int8)).cast(dtypes.float32),
  "int64": lambda: cpu(N(-2**40, 2**40, 200, dt=np.int64)) * 3 + 1,
  "gather": lambda: cpu(F(100))[cpu(N(0, 100, 64))],
  "cumsum": lambda: cpu(F(200)).cumsum(),
  "argmax": lambda: cpu(F(30, 50)).argmax(axis=1),
  "half_casts": lambda: (cpu(F(500)).cast(dtypes.half) + cpu(F(500)).cast(dtypes.half)).maximum(0).cast(dtypes.float32),
  "float64": lambda: (cpu(F(100).astype(np.float64)) * cpu(F(100).astype(np.float64))).maximum(cpu(F(100).astype(np.float64))),
  "float64_sqrt_recip": lambda: (cpu(F(100).astype(np.float64)).abs() + 0.25).sqrt().reciprocal(),
  "half_transcendentals": lambda: (cpu(F(300)).cast(dtypes.half).exp2() + cpu(F(300)).abs().cast(dtypes.half).log2()
                                   + cpu(F(300)).cast(dtypes.half).sin()).cast(dtypes.float32),
  "half_matmul_wmma": lambda: (cpu(F(64, 64)).cast(dtypes.half) @ cpu(F(64, 64)).cast(dtypes.half)).float(),
  "half_acc_matmul_wmma": lambda: cpu(F(64, 64)).cast(dtypes.half).matmul(cpu(F(64, 64)).cast(dtypes.half), dtype=dtypes.half),
  "int8_matmul_wmma": lambda: cpu(N(-128, 128, 64, 64, dt=np.int8)).matmul(cpu(N(-128, 128, 64, 64, dt=np.int8)), dtype=dtypes.int32),
}

def build(name:str):
  """The kernel's tensor expression over seeded inputs, the same on every call."""
  global rng
  rng = np.random.default_rng(11)
  return KERNELS[name]()

def _path(monkeypatch, name:str):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if name == "numpy" else "1")

@pytest.mark.parametrize("name", KERNELS)
def test_kernel_same_bits_on_both_paths(name, monkeypatch):
  _path(monkeypatch, "numpy")
  want, want_stats = run_mock(build(name))
  _path(monkeypatch, "native")
  got, got_stats = run_mock(build(name))
  assert not any(st.native for st in want_stats)
  assert all(st.native for st in got_stats), f"{name}: a kernel stayed on the numpy path"
  assert [st.wave_instructions for st in got_stats] == [st.wave_instructions for st in want_stats]
  np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8), np.atleast_1d(want).view(np.uint8))

def test_auto_mode_builds_once_it_pays_then_finds_the_build(monkeypatch):
  """auto: numpy until the seconds spent there reach the estimated build (MOCKGPU_CC_COST=0: at once), built in the
  background; a fresh process (here: the program cache emptied) takes the recorded build at its first dispatch."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "0")   # the kernel's own C tier (a stencil library may hold its handlers)
  monkeypatch.setenv("MOCKGPU_CC_COST", "0")
  from mockgpu.compiler import native as cnative
  from mockgpu.emulators.rdna import executor
  import support.rdna_isa as isa
  from mockgpu.memory import AddressSpace
  out = np.zeros(32, np.uint32)
  body = isa.kernel(isa.tid_times4(), I.v_mov_b32_e32(v[2], 7), isa.store(v[2]), I.s_endpgm())
  from mockgpu import system
  mem = AddressSpace("auto")
  monkeypatch.setattr(executor, "_programs", {})  # no tier state from another test's dispatches
  monkeypatch.setattr(cnative, "find", lambda tag, key: None)  # as if no process had built it (an earlier run did)
  before = system.stats["rdna3.native_launches"]
  first = _run_same_code(isa, body, out, mem)[0].native
  cnative.wait()
  paths = [first] + [_run_same_code(isa, body, out, mem)[0].native for _ in range(2)]
  assert paths == [False, True, True]
  monkeypatch.undo()  # the index back, as a fresh process sees it (undo drops the settings too: set again)
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "auto")
  monkeypatch.setenv("MOCKGPU_RDNA_STENCIL", "0")
  monkeypatch.setenv("MOCKGPU_CC_COST", "1e6")  # a build now would not pay: only the index can give C
  monkeypatch.setattr(executor, "_programs", {})
  assert _run_same_code(isa, body, out, mem)[0].native
  assert system.stats["rdna3.native_launches"] == before + 3
  assert (out == 7).all()

def _run_same_code(isa, body, out, mem, _cache={}):
  """Dispatch the same code object (same address) again, as tinygrad relaunches a kernel."""
  import struct
  from mockgpu.emulators.rdna import Dispatch, run_dispatch
  from support.rdna_harness import aligned
  if id(mem) not in _cache:
    code = b"".join(i.to_bytes() for i in body)
    img, args, inp = aligned(4096), aligned(256, 256), np.zeros(4, np.uint32)
    img[:len(code)] = np.frombuffer(code, np.uint8)
    struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
    for a in (img, args, out, inp): mem.map(a.ctypes.data, a.nbytes)
    _cache[id(mem)] = (img, args, inp)
  img, args, _ = _cache[id(mem)]
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch("rdna3", img.ctypes.data, isa.RSRC1, isa.RSRC2, 0, user, 0, 0, (32, 1, 1), (1, 1, 1), True)
  return run_dispatch(mem, d), img.ctypes.data

# special float32 values: signed zeros, infinities, NaNs with payloads (quiet and signalling), denormals, extremes
SPECIAL = np.array([0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345,
                    0x00000001, 0x807fffff, 0x00400000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x3effffff,
                    0x4b000001, 0xcb7fffff, 0x3f000000, 0x40490fdb], np.uint32)

def _operands(k:int) -> np.ndarray:
  """32 lanes: the special values in rotating order (so every pair meets) and random floats."""
  x = np.concatenate([np.roll(SPECIAL, 3 * k), (rng.standard_normal(12) * 10.0 ** rng.integers(-3, 4, 12)).astype(np.float32).view(np.uint32)])
  return x[:32].copy()

def _inst(name:str, nsrc:int):
  """The instruction for a VOP table entry in its most general encoding (VOP3 where it exists)."""
  for suffix in ("_e64", ""):
    fn = getattr(I, f"v_{name.lower()}{suffix}", None)
    if fn is not None: return fn(v[4], v[2], v[3], v[5]) if nsrc == 3 else fn(v[4], v[2], v[3]) if nsrc == 2 else fn(v[4], v[2])
  fn = getattr(I, f"v_{name.lower()}_e32")
  return fn(v[4], v[2], v[3]) if nsrc == 2 else fn(v[4], v[2])

# 32-bit operands only: run_op moves 32-bit registers (64-bit ops are covered by the float64 and casts kernels)
def _nan_halves(x:np.ndarray) -> np.ndarray:
  """Each 32-bit result as two float16 halves, with every NaN half replaced by one canonical NaN."""
  h = x.view(np.uint16).copy()
  h[((h & 0x7c00) == 0x7c00) & ((h & 0x3ff) != 0)] = 0x7e00
  return h

def same_bits(monkeypatch, inst, ops, what:str, half_nans:bool=False):
  """inst over the operands on both paths: the native path must take the kernel and give the numpy path's bits.
  half_nans: float16 results where both operands are NaN may carry either one's payload; numpy's own float16 add and
  multiply loops pick the second, its float32 loops the first (an operand order its C compiler chooses), and the
  native path always takes the first, as for float32."""
  from mockgpu.emulators.rdna import native
  outs = []
  for path in ("numpy", "native"):
    _path(monkeypatch, path)
    declined = sum(native.declined.values())
    outs.append(run_op(inst, *ops))
  assert sum(native.declined.values()) == declined, f"{what}: the native path declined the kernel: {native.declined}"
  if half_nans: outs = [_nan_halves(o) for o in outs]
  np.testing.assert_array_equal(outs[1], outs[0], err_msg=f"{what}: native bits differ from the numpy path")

def _plain(name:str, row) -> bool:
  """A row one plain VOP1/VOP2/VOP3 instruction runs: sources a, b, c, a destination, no lane mask in or out."""
  return row.dst is not None and all(n in "abc" for n, _ in row.srcs) and "vcc" not in row.assigns() \
         and "vcc" not in free_names(row) and name not in sem.LITERAL_K and name not in sem.ACCUMULATE

def _instruction(name:str) -> bool:  # a row of its own (not a variant such as DOT4_I32_IU8_SU, chosen by NEG bits)
  return any(hasattr(I, f"v_{name.lower()}{suffix}") for suffix in ("", "_e32", "_e64"))
C_ROWS = {n: r for n, r in sem.VOP.items() if c_rows()[n] and _plain(n, r) and _instruction(n)}  # what both paths run
def _types(name:str) -> tuple[str, ...]: return (C_ROWS[name].dst, *C_ROWS[name].source_types())
def _nsrc(name:str) -> int: return len(C_ROWS[name].srcs)

FLOAT_OPS = [n for n in C_ROWS if "f32" in _types(n) and not {"f64", "u64", "i64"} & set(_types(n))]

@pytest.mark.parametrize("name", FLOAT_OPS)
def test_float_instruction_same_bits_on_both_paths(name, monkeypatch):
  same_bits(monkeypatch, _inst(name, _nsrc(name)), [_operands(k) for k in range(3)], name)

@pytest.mark.parametrize("path", ["numpy", "native"])
@pytest.mark.parametrize("name", ["log_f32", "sqrt_f32", "rsq_f32"])
def test_invalid_operation_gives_the_default_nan(name, path, monkeypatch):
  # x86 and numpy's SIMD loops give a NaN with the sign set here, depending on the host CPU; the GPU gives +qNaN
  _path(monkeypatch, path)
  a = np.resize(np.array([0xbf800000, 0xff800000, 0xc2c80000], np.uint32), 32)
  out = run_op(getattr(I, f"v_{name}_e32")(v[4], v[2]), a, a, a)
  assert {hex(x) for x in out} == {"0x7fc00000"}

@pytest.mark.parametrize("mods", [dict(neg=1), dict(abs=3), dict(neg=6, abs=1), dict(omod=1), dict(omod=3, clmp=1), dict(clmp=1)])
def test_source_and_output_modifiers_same_bits(mods, monkeypatch):
  same_bits(monkeypatch, I.v_fma_f32(v[4], v[2], v[3], v[5], **mods), [_operands(k) for k in range(3)], str(mods))

def test_uncovered_instruction_keeps_the_numpy_path(monkeypatch):
  """v_trig_preop_f64 (its helper has no C form: a numpy-only row, c_rows lists them): declined, counted, and the numpy
  path's bits on either setting."""
  from mockgpu.emulators.rdna import native
  why = "trig_preop(f64, u32) has no C form"
  x = np.full(32, 0x3ff80000, np.uint32)   # S0 = v[2:3] (both halves 0x3ff80000), shift S1 = v5 = 0x3ff80000 & 31 = 0
  _path(monkeypatch, "numpy")
  want = run_op(I.v_trig_preop_f64(v[4:5], v[2:3], v[5]), x, x, x)
  _path(monkeypatch, "native")
  before = native.declined[why]
  got = run_op(I.v_trig_preop_f64(v[4:5], v[2:3], v[5]), x, x, x)
  assert native.declined[why] == before + 1
  np.testing.assert_array_equal(got, want)
  assert (want != 0).all()

def test_packed_half_fma_same_bits(monkeypatch):
  """v_pk_fma_f16 (both halves rounded once, prelude fma16) on both paths, and against the exact product rounded once."""
  a, zero = _operands16(0), np.zeros(32, np.uint32)
  same_bits(monkeypatch, I.v_pk_fma_f16(v[4], v[2], v[3], v[5]), [a, a, zero], "pk_fma_f16")
  got = run_op(I.v_pk_fma_f16(v[4], v[2], v[3], v[5]), a, a, zero)
  h = a.view(np.float16)
  with np.errstate(over="ignore", invalid="ignore"): want = (h.astype(np.float64) * h).astype(np.float16)  # exact, rounded once
  np.testing.assert_array_equal(got.view(np.float16)[~np.isnan(want)], want[~np.isnan(want)])

INT_OPS = [n for n in C_ROWS if not any(x[0] == "f" or x.endswith("64") for x in _types(n))]

@pytest.mark.parametrize("name", INT_OPS)
def test_integer_instruction_same_bits_on_both_paths(name, monkeypatch):
  nsrc = _nsrc(name)
  ops = [rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
  ops[0][:8] = [0, 1, 31, 32, 0xffffffff, 0x80000000, 0xffff, 0x8000]  # shift counts, signs, 16-bit edges
  insts = [_inst(name, nsrc)]
  if "16" in name and hasattr(I, f"v_{name.lower()}"):  # the high halves of the 16-bit operands through op_sel (VOP3 only)
    fn = getattr(I, f"v_{name.lower()}")
    types = _types(name)
    sixteen = sum(1 << i for i, t in enumerate(types[1:]) if t[1:] == "16") | (8 if types[0][1:] == "16" else 0)
    sel = (0b1011 if nsrc == 3 else 0b1001) & sixteen
    insts.append(fn(v[4], v[2], v[3], v[5], opsel=sel) if nsrc == 3 else fn(v[4], v[2], v[3], opsel=sel) if nsrc == 2 else fn(v[4], v[2], opsel=sel))
  for inst in insts: same_bits(monkeypatch, inst, ops, name)

# special float16 values in both halves: signed zeros, infinities, NaNs (quiet, signalling, with payloads),
# subnormals, the largest half and values that round to it or past it when converted
SPECIAL16 = np.array([0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 0xfd45, 0x0001, 0x83ff, 0x0200, 0x7bff,
                      0xfbff, 0x3c00, 0xbc00, 0x3bff], np.uint16)

def _operands16(k:int) -> np.ndarray:
  lo = np.concatenate([np.roll(SPECIAL16, 5 * k), (rng.standard_normal(16) * 30).astype(np.float16).view(np.uint16)])
  hi = np.roll(lo, 7 + k)
  return (lo.astype(np.uint32) | (hi.astype(np.uint32) << 16))[:32]

HALF_OPS = [n for n in C_ROWS if "f16" in _types(n)]

@pytest.mark.parametrize("name", HALF_OPS)
def test_half_instruction_same_bits_on_both_paths(name, monkeypatch):
  nsrc = _nsrc(name)
  ops = [_operands16(k) for k in range(3)]
  if _types(name)[1] == "f32":
    ops[0] = np.concatenate([SPECIAL.view(np.float32)[:20], (rng.standard_normal(12) * 7e4).astype(np.float32)]).view(np.uint32)
  nans = name in ("ADD_F16", "MUL_F16")
  same_bits(monkeypatch, _inst(name, nsrc), ops, name, nans)
  fn = getattr(I, f"v_{name.lower()}", None) or getattr(I, f"v_{name.lower()}_e64", None)
  if fn is not None and _types(name)[0] in ("f16", "u16", "i16") and not name.startswith("FMA_MIX"):  # high halves in and out through op_sel (VOP3)
    sel = 0b1000 | sum(1 << i for i, t in enumerate(_types(name)[1:]) if t in ("f16", "u16", "i16") and i != 1)
    srcs = [v[2], v[3], v[5]][:nsrc]
    same_bits(monkeypatch, fn(v[4], *srcs, opsel=sel), ops, f"{name} op_sel", nans)

@pytest.mark.parametrize("mods", [dict(neg=3), dict(abs=1), dict(omod=1), dict(omod=2, clmp=1), dict(clmp=1)])
def test_half_modifiers_same_bits(mods, monkeypatch):
  same_bits(monkeypatch, I.v_add_f16_e64(v[4], v[2], v[3], **mods), [_operands16(k) for k in range(3)], str(mods), True)
