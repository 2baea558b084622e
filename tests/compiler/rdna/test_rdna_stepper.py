"""The reference stepper (compiler/rdna/backends/stepper.py): one wave, one instruction at a time, its whole state
visible between instructions; and the oracle of the fast backends. Seeded random straight-line programs over the
implemented VALU and SALU rows (every operand kind: VGPRs, SGPRs, inline constants, literals, 16-bit halves through
op_sel, 64-bit pairs, neg/abs/omod/clamp; EXEC and VCC patterns; special float and integer values) run on the stepper,
the numpy backend and the C backend, and must leave the same registers; RDNA4 programs (its table: renamed ops, the float
SALU, v_s_*, the IEEE 754-2019 min/max rows) and CDNA3 wave64 programs (its table, by the DSL's GFX9 names) as well.
MOCKGPU_FUZZ multiplies the programs."""
from __future__ import annotations
import inspect, os, struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from mockgpu.compiler.rdna.backends import stepper as stepper_module
from mockgpu.compiler.rdna.backends.numpy import Translator
from mockgpu.compiler.rdna.backends.stepper import Stepper, WaveState
from support.stepper_scan import findings
from support.rdna_harness import aligned
from support.rdna_isa import RSRC1, RSRC2
from support.rdna_stepper import DATA_S, DATA_V, Gen, ISAS, _kernel, _run, _words

def test_state_is_visible_and_copyable_between_instructions():
  code = _words(I.v_add_nc_u32_e32(v[1], 5, v[0]), I.s_mov_b32(s[3], 7), I.s_cmp_eq_u32(s[3], 7), I.s_cbranch_scc1(simm16=1),
                I.v_mov_b32_e32(v[1], 0), I.v_cmp_gt_u32_e32(3, v[0]), I.s_endpgm())
  st = Stepper(code, arch="rdna3", lanes=32, state=WaveState.empty(32, vgprs={0: np.arange(32)}))
  st.step()
  assert st.pc == 4 and (st.state.vgpr[1] == np.arange(32) + 5).all()
  before = st.state.copy()
  st.step(); st.step()
  assert st.state.sgpr[3] == 7 and st.state.scc == 1 and before.sgpr[3] == 0 and before.pc == 4  # the copy kept its state
  st.step()
  assert st.pc == 20   # s_cbranch_scc1 skipped the v_mov_b32
  final = st.run()
  assert final.done and st.steps == 6 and (final.vgpr[1] == np.arange(32) + 5).all() and final.vcc == 0b111

def test_stepper_of_a_dispatch_wave_matches_the_executor():
  """executor.stepper sets a wave up as the SPI does: user SGPRs, workgroup id, work-item ids, EXEC of a partial wave.
  Each thread of workgroup g writes g * 40 + tid to out[g * 64 + tid]; 40 threads: two waves in wave32, one in wave64."""
  body = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0), I.v_lshlrev_b32_e32(v[1], 2, v[0]),
          I.s_mul_i32(s[8], s[2], 40), I.v_add_nc_u32_e32(v[2], s[8], v[0]), I.s_lshl_b32(s[9], s[2], 8),
          I.v_add_nc_u32_e32(v[1], s[9], v[1]), I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=0), I.s_endpgm()]
  want = np.zeros((3, 64), np.uint32)
  want[:, :40] = np.arange(3)[:, None] * 40 + np.arange(40)
  for lanes in (32, 64):
    code = _words(*body)
    img, out, args = aligned(4096), aligned(4 * 64 * 3, 256).view(np.uint32), aligned(256, 256)
    img[:len(code)] = np.frombuffer(code, np.uint8)
    struct.pack_into("<QQ", args, 0, out.ctypes.data, out.ctypes.data)
    mem = AddressSpace("stepper")
    for a in (img, args, out): mem.map(a.ctypes.data, a.nbytes)
    user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
    d = Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (40, 1, 1), (3, 1, 1), lanes == 32)
    run_dispatch(mem, d)
    np.testing.assert_array_equal(out.reshape(3, 64), want)
    out[:] = 0
    for g in range(3):
      for w in range(-(-40 // lanes)): executor.stepper(mem, d, g, w).run()
    np.testing.assert_array_equal(out.reshape(3, 64), want)



def _same(got:np.ndarray, want:np.ndarray, what:str, body:list):
  if np.array_equal(got, want): return
  row, lane = (int(x[0]) for x in np.nonzero(got != want))
  names = [f"v{k}" for k in DATA_V] + [f"s{k}" for k in DATA_S] + ["vcc_lo", "vcc_hi", "scc", "exec_lo", "exec_hi"]
  raise AssertionError(f"{what}: {names[row]} lane {lane}: {got[row, lane]:#x} != {want[row, lane]:#x}\n" +
                       "\n".join(repr(i) for i in body))

PROGRAMS = int(os.environ.get("MOCKGPU_FUZZ", "1")) * 3

@pytest.mark.parametrize("lanes", [32, 64])
@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_same_on_stepper_numpy_and_c(seed, lanes, monkeypatch):
  """Rows C renders: the stepper, the numpy and the C backend agree bit for bit."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(1000 * lanes + seed, lanes, c_only=True)
  body, inputs = _kernel(g, 120)
  want = _run(body, inputs, lanes, "stepper")
  _same(_run(body, inputs, lanes, "numpy"), want, "numpy vs stepper", body)
  _same(_run(body, inputs, lanes, "native"), want, "C vs stepper", body)

@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_same_on_stepper_and_numpy(seed, monkeypatch):
  """Every row: numpy-only rows too (transcendentals, f16 math, fmed3, div_fixup, perm, ...)."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(77 + seed, 32, c_only=False)
  body, inputs = _kernel(g, 120)
  _same(_run(body, inputs, 32, "numpy"), _run(body, inputs, 32, "stepper"), "numpy vs stepper", body)

@pytest.mark.parametrize("family,lanes,base", [("rdna4", 32, 4000), ("cdna3", 64, 6000)])
@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_family_programs_same_on_stepper_numpy_and_c(seed, family, lanes, base, monkeypatch):
  """RDNA4 programs over its table (RDNA3's rows by their RDNA4 names, the renamed scalar ops, the float SALU, v_s_*,
  v_min_num & co.) and CDNA3 wave64 ones over its table (GFX9 encodings: M0 at 124, e32 v[128+] as VGPRs, 16-bit
  results zeroing bits 31:16, GFX9 min/max): the stepper, numpy and C agree, and numpy-only rows too on the stepper and
  numpy."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  g = Gen(base + seed, lanes, c_only=True, isa=ISAS[family])
  body, inputs = _kernel(g, 120)
  want = _run(body, inputs, lanes, "stepper", family)
  _same(_run(body, inputs, lanes, "numpy", family), want, "numpy vs stepper", body)
  _same(_run(body, inputs, lanes, "native", family), want, "C vs stepper", body)
  g = Gen(base + 1000 + seed, lanes, c_only=False, isa=ISAS[family])
  body, inputs = _kernel(g, 120)
  _same(_run(body, inputs, lanes, "numpy", family), _run(body, inputs, lanes, "stepper", family), "numpy vs stepper", body)

# *** the stepper writes no op's meaning: it runs the numpy backend's translation of each instruction ***

# modules holding ops' meaning (the rows, the runtime helpers the translated code calls, the lowering to ops)
RDNA_MEANING = {f"mockgpu.compiler.rdna.{m}" for m in ("backends.numpy_runtime", "backends.numpy_memory", "backends.numpy_control",
                                                       "backends.c", "program", "semantics", "buffer", "gfx9", "operands.lower")}
# the functions of stepper.py allowed arithmetic, for no op: lane-mask views of the state, a fall-through's offset,
# the step count, the budget message's PC
RDNA_ARITHMETIC = {"WaveState.empty", "WaveState.mask", "WaveState.set_mask", "WaveState.active", "block_index",
                   "Stepper.count", "Stepper.run"}

def _rdna_scan(source:str) -> list[str]:
  t = Translator([], False, False, "rdna3", 32)
  ops = {k.__name__ for k in t.emitters} | {f.__name__ for f in t.emitters.values() if f.__name__ != "<lambda>"}
  return findings(source, RDNA_MEANING, ops, set(), RDNA_ARITHMETIC)

def test_stepper_writes_no_op_meaning():
  assert _rdna_scan(inspect.getsource(stepper_module)) == []

HANDLERS = {  # per-op code as the stepper once had it: the scan finds each
  "arithmetic": "  def read_lane(self, o):\n    lane = int(self.state.sgpr[o.lane]) & (self.lanes - 1)\n"
                "    self.state.sgpr[o.dst] = self.state.vgpr[o.src][lane]\n",
  "a runtime helper": "  def permute(self, o):\n    from mockgpu.compiler.rdna.backends.numpy_memory import swizzle\n"
                      "    self.state.vgpr[o.dst] = swizzle(self.state.vgpr[o.data][None], self.state.active()[None], o.offset)[0]\n",
  "a dispatch on ops": "  def table(self): return {ops.Swap: self.run}\n",
  "an emitter's name": "  def swap(self, o): self.state.vgpr[[o.a, o.b]] = self.state.vgpr[[o.b, o.a]]\n",
}

@pytest.mark.parametrize("kind", HANDLERS)
def test_the_scan_finds_per_op_code(kind):
  source = inspect.getsource(stepper_module)
  assert "class Stepper:\n" in source
  assert _rdna_scan(source.replace("class Stepper:\n", "class Stepper:\n" + HANDLERS[kind]))

def test_the_stepper_runs_the_numpy_emitters(monkeypatch):
  """A change to a numpy emitter is a change to the stepper: v_swap_b32 swaps, and once the Translator's swap emits
  something else, the stepper does that."""
  code = _words(I.v_mov_b32_e32(v[1], 5), I.v_swap_b32_e32(v[0], v[1]), I.s_endpgm())
  run = lambda: Stepper(code, arch="rdna3", lanes=32, state=WaveState.empty(32, vgprs={0: np.arange(32)})).run().vgpr
  vgpr = run()
  assert (vgpr[0] == 5).all() and (vgpr[1] == np.arange(32)).all()
  monkeypatch.setattr(Translator, "swap", lambda self, o: self.out(f"vw(V, {o.a}, w, V[{o.a}][w] + V[{o.b}][w], m, full)"))
  monkeypatch.setattr(stepper_module, "VERSION", f"{stepper_module.VERSION}-patched-swap")  # past the translation cache
  vgpr = run()
  assert sorted(map(tuple, vgpr[:2])) == sorted([tuple(np.arange(32)), tuple(np.arange(32) + 5)])  # one operand plus the other
