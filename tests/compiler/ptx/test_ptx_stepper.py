"""The PTX reference stepper (compiler/ptx/backends/stepper.py): its state between instructions, undo, faults, and
seeded random programs run on the stepper, the numpy path and the C path with the same final registers and memory."""
import inspect, random
import numpy as np
import pytest
from mockgpu.errors import GPUPageFault, InstructionBudgetExceeded
from mockgpu.emulators.ptx import launch, stepper, run_stepped
from mockgpu.compiler.ptx import semantics
from mockgpu.compiler.ptx.backends import stepper as stepper_module
from support.ptx_isa import kernel, LOAD3, HEAD
from support.ptx_native import BARRIER
from support.ptx_stepper import _launch
from support.stepper_scan import findings

def test_state_is_visible_between_instructions():
  x = np.arange(32, dtype=np.uint32) * 3
  out = np.zeros(32, np.uint32)
  st = stepper(_launch(kernel(LOAD3 + "add.u32 %r4, %r1, 7;\nst.global.b32 [%rd9], %r4;"), [out, x, x, x]))
  assert st.instr.text == "mov.u32 %r0, %tid.x" and st.pc == (0, 0)
  st.step()
  np.testing.assert_array_equal(st.reg("%r0"), np.arange(32))
  while st.instr.op != "st": st.step()
  np.testing.assert_array_equal(st.reg("%r4"), x + 7)
  assert not out.any()            # the store has not run yet
  st.step()
  np.testing.assert_array_equal(out, x + 7)
  assert st.instr.op == "ret" and st.line == st.instr.line
  st.step()
  assert st.done and st.pc is None
  with pytest.raises(KeyError, match="no register %r99"): st.reg("%r99")

def _full_state(st, arrays):
  return ({k: v.copy() for k, v in st.registers().items()}, st.blk.copy(), st.idx.copy(), st.carry.copy(),
          st.shared.copy(), [a.copy() for a in arrays], list(st.env.counters))

def _assert_same(a, b):
  assert a[0].keys() == b[0].keys()
  for k in a[0]: np.testing.assert_array_equal(a[0][k].view(np.uint8), b[0][k].view(np.uint8), err_msg=k)
  for x, y in zip(a[1:5], b[1:5]): np.testing.assert_array_equal(x, y)
  for x, y in zip(a[5], b[5]): np.testing.assert_array_equal(x, y)
  assert a[6] == b[6]

def test_undo_returns_exactly_to_every_earlier_state():
  """Registers, pcs, carry, shared memory, global memory and counters, compared in full after each undo."""
  out = np.zeros(64, np.uint32)
  st = stepper(_launch(BARRIER, [out], grid=(2, 1, 1), block=(64, 1, 1)), cta=(1, 0, 0))
  assert st.cta == (1, 0, 0) and st.lane(37) == (1, 5)
  states = []
  while not st.done:
    states.append(_full_state(st, [out]))
    st.step()
  assert out[:48].any()
  for s in reversed(states):
    assert st.undo()
    _assert_same(_full_state(st, [out]), s)
  assert not out.any() and not st.undo()

@pytest.mark.parametrize("seed", [1, 2, 6])
def test_undo_of_random_programs_is_exact(seed):
  """The same over random programs: carry, .local and .shared traffic, divergence and barriers."""
  inputs = _inputs(seed)
  out, x = np.zeros_like(inputs), inputs.copy()
  st = stepper(_launch(random_kernel(seed), [out, x], (1, 1, 1), (64, 1, 1)))
  states = []
  while not st.done:
    states.append(_full_state(st, [out, x]) + (st.env.local.copy(),))
    st.step()
  assert out.any() and len(states) > 50
  for s in reversed(states):
    assert st.undo()
    now = _full_state(st, [out, x]) + (st.env.local.copy(),)
    _assert_same(now, s)
    np.testing.assert_array_equal(now[7], s[7])

def test_undo_of_an_atomic_restores_memory_and_the_old_values():
  """atom.global.add by 32 threads on 4 counters (the C path does not run atomics: the stepper journals them too)."""
  src = kernel("""
mov.u32 %r0, %tid.x;
and.b32 %r1, %r0, 3;
mul.wide.u32 %rd1, %r1, 4;
ld.param.u64 %rd2, [out];
add.s64 %rd2, %rd2, %rd1;
atom.global.add.u32 %r2, [%rd2], %r0;
ld.param.u64 %rd3, [in0];
mul.wide.u32 %rd4, %r0, 4;
add.s64 %rd3, %rd3, %rd4;
st.global.u32 [%rd3], %r2;""")
  counters, old = np.full(4, 100, np.uint32), np.zeros(32, np.uint32)
  st = stepper(_launch(src, [counters, old]))
  while st.instr.op != "atom": st.step()
  st.step()
  np.testing.assert_array_equal(counters, 100 + np.array([sum(range(i, 32, 4)) for i in range(4)]))
  st.run()
  assert sorted(old[0::4] - 100) == sorted(np.cumsum(range(0, 32, 4)) - range(0, 32, 4))   # lane order within an address
  while st.undo(): pass
  assert (counters == 100).all() and not old.any()

def test_a_barrier_waits_for_every_warp():
  out = np.zeros(64, np.uint32)
  st = stepper(_launch(BARRIER, [out], block=(64, 1, 1)))
  ran = []
  while not st.done:
    nxt = st.instr
    s = st.step()
    assert s.instr is nxt   # the pc says what the step runs, the barrier included
    ran.append((s.warp, s.instr.op, int(s.threads.sum()), s.instr.text))
  bar = [i for i, r in enumerate(ran) if r[1] == "bar"]
  assert len(bar) == 1 and ran[bar[0]][:3] == (None, "bar", 48)   # threads 48.. exited before it: the live ones meet
  assert {r[0] for r in ran[:bar[0]]} == {0, 1}
  assert all(not r[3].startswith("ld.shared") for r in ran[:bar[0]])            # nobody reads shared memory before everyone wrote it

def test_a_fault_leaves_the_state_at_the_instruction_with_the_fast_paths_message():
  x, out = np.arange(32, dtype=np.uint32), np.zeros(32, np.uint32)
  src = kernel(LOAD3 + "add.s64 %rd9, %rd9, 4096;\nst.global.b32 [%rd9], %r1;")
  st = stepper(_launch(src, [out, x, x, x]))
  with pytest.raises(GPUPageFault) as stepped:
    st.run()
  with pytest.raises(GPUPageFault) as fast:
    launch(st.env.mem, st.env.kernel, (1, 1, 1), (32, 1, 1), st.env.params)
  same = ("address", "size", "write", "where", "space", "kernel", "nearest")
  assert {k: stepped.value.fields().get(k) for k in same} == {k: fast.value.fields().get(k) for k in same}
  assert stepped.value.cta == (0, 0, 0) and stepped.value.thread == (0, 0, 0)   # every thread faults: the first is named
  assert str(stepped.value).startswith(str(fast.value).split(";")[0])
  assert st.instr.text == "st.global.b32 [%rd9], %r1" and stepped.value.va == int(st.reg("%rd9")[0])
  with pytest.raises(GPUPageFault): st.step()     # still there

def test_the_budget_stops_the_stepper(monkeypatch):
  monkeypatch.setenv("MOCKGPU_BUDGET", "50")
  st = stepper(_launch(kernel("LOOP:\nadd.u32 %r1, %r1, 1;\nbra LOOP;"), []))
  with pytest.raises(InstructionBudgetExceeded, match="ran past 50 warp-instructions"): st.run()

def test_a_cta_outside_the_grid_is_refused():
  with pytest.raises(ValueError, match=r"CTA \(2, 0, 0\) is outside the grid \(2, 1, 1\)"):
    stepper(_launch(BARRIER, [np.zeros(64, np.uint32)], grid=(2, 1, 1)), cta=(2, 0, 0))

# *** random programs: the stepper is the oracle of both fast paths ***

NR, NF = 8, 6   # b32 registers %r1..%r8 and f32 registers %f1..%f6 each thread starts from and stores at the end

INT_OPS = ["add.s32 {d}, {a}, {b}", "sub.u32 {d}, {a}, {b}", "mul.lo.u32 {d}, {a}, {b}", "mul.hi.s32 {d}, {a}, {b}",
           "mad.lo.s32 {d}, {a}, {b}, {c}", "and.b32 {d}, {a}, {b}", "or.b32 {d}, {a}, {b}", "xor.b32 {d}, {a}, {b}",
           "shl.b32 {d}, {a}, {k}", "shr.u32 {d}, {a}, {k}", "shr.s32 {d}, {a}, {k}", "min.s32 {d}, {a}, {b}",
           "max.u32 {d}, {a}, {b}", "not.b32 {d}, {a}", "neg.s32 {d}, {a}", "popc.b32 {d}, {a}", "clz.b32 {d}, {a}",
           "brev.b32 {d}, {a}", "bfe.u32 {d}, {a}, {k}, 9", "prmt.b32 {d}, {a}, {b}, 0x3210", "add.cc.u32 {d}, {a}, {b}",
           "addc.u32 {d}, {a}, {b}", "setp.lt.s32 %p1, {a}, {b};\nselp.b32 {d}, {a}, {b}, %p1", "rem.u32 {d}, {a}, 7",
           "div.s32 {d}, {a}, 5"]   # every row here has a C rendering (mul24 has none: the kernel would stay on numpy)
FLOAT_OPS = ["add.f32 {D}, {A}, {B}", "sub.f32 {D}, {A}, {B}", "mul.f32 {D}, {A}, {B}", "fma.rn.f32 {D}, {A}, {B}, {C}",
             "min.f32 {D}, {A}, {B}", "max.f32 {D}, {A}, {B}", "abs.f32 {D}, {A}", "neg.f32 {D}, {A}",
             "div.rn.f32 {D}, {A}, {B}", "sqrt.rn.f32 {D}, {A}", "cvt.rn.f32.s32 {D}, {a}", "cvt.rzi.s32.f32 {d}, {A}",
             "setp.gtu.f32 %p2, {A}, {B};\nselp.f32 {D}, {A}, {B}, %p2", "mov.b32 {d}, {A}", "mov.b32 {D}, {a}"]

class Gen:
  """Straight-line runs of random rows, divergent branches on the thread id, tid-dependent loops, and a barrier with
  shared memory traffic between warps. warps: the rows also include instructions that combine threads (shfl in every
  mode with clamps and segment masks, vote, activemask, redux, some under a guard) and the barrier a bar.red, so
  that they run inside divergent branches and loops (the C backend's warp mode)."""
  def __init__(self, seed:int, warps:bool=False):
    self.rng, self.nlabel, self.warps = random.Random(seed), 0, warps
    # a carry flag across a barrier takes the C backend's warp mode: without warp-wide rows a program has one or the
    # other, so that the thread-at-a-time translation with barriers is the one these programs exercise
    self.barriers = self.rng.random() < 0.5
    self.ops = [o for o in INT_OPS + FLOAT_OPS if warps or not (self.barriers and ".cc" in o or self.barriers and "addc" in o)]
  def r(self): return f"%r{self.rng.randint(1, NR)}"
  def f(self): return f"%f{self.rng.randint(1, NF)}"
  def p(self): return f"{self.rng.choice(['', '!'])}%p{self.rng.randint(1, 4)}"
  def op(self) -> str:
    if self.warps and self.rng.random() < 0.35: return self.warp_op()
    t = self.rng.choice(self.ops)
    return t.format(d=self.r(), a=self.r(), b=self.r(), c=self.r(), k=self.rng.randint(0, 40), D=self.f(), A=self.f(),
                    B=self.f(), C=self.f()) + ";"
  def warp_op(self) -> str:
    rng = self.rng
    guard = f"@{self.p()} " if rng.random() < 0.3 else ""
    kind = rng.choice(["shfl", "shfl", "shfl_p", "vote", "ballot", "activemask", "redux"])
    if kind.startswith("shfl"):
      mode = rng.choice(["up", "down", "bfly", "idx"])
      lane = self.r() if rng.random() < 0.3 else rng.randint(0, 40)
      c = self.r() if rng.random() < 0.2 else rng.choice([0, 0x10, 0x18, 0x1c, 0x1e]) << 8 | rng.choice([31, 0, rng.randint(0, 31)])
      if kind == "shfl": return f"{guard}shfl.sync.{mode}.b32 {self.r()}, {self.r()}, {lane}, {c}, -1;"
      return f"{guard}shfl.sync.{mode}.b32 {self.r()}|%p5, {self.r()}, {lane}, {c}, -1;\nselp.b32 {self.r()}, {self.r()}, {self.r()}, %p5;"
    if kind == "vote":
      return f"{guard}vote.sync.{rng.choice(['all', 'any', 'uni'])}.pred %p5, {self.p()}, -1;\nselp.b32 {self.r()}, {self.r()}, {self.r()}, %p5;"
    if kind == "ballot": return f"{guard}vote.sync.ballot.b32 {self.r()}, {self.p()}, -1;"
    if kind == "activemask": return f"{guard}activemask.b32 {self.r()};"
    op, t = rng.choice([("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"),
                        ("and", "b32"), ("or", "b32"), ("xor", "b32")])
    return f"{guard}redux.sync.{op}.{t} {self.r()}, {self.r()}, -1;"
  def run(self, n:int) -> list[str]: return [self.op() for _ in range(n)]
  def label(self) -> str:
    self.nlabel += 1
    return f"L{self.nlabel}"
  def piece(self, depth:int=0) -> list[str]:
    # barriers only where every thread is (depth 0): one inside divergent code is undefined behaviour in PTX
    kind = self.rng.choice([["run", "if", "loop", "local"] + ["barrier"] * self.barriers, ["run", "if", "loop", "local"], ["run"]][depth])
    if kind == "run": return self.run(self.rng.randint(1, 5))
    if kind == "local":   # a thread's own .local words, written and read back at a register-chosen index
      return [f"and.b32 %r16, {self.r()}, 12;", f"st.local.b32 [lbuf+{4 * self.rng.randint(0, 3)}], {self.r()};",
              "mov.u32 %r17, lbuf;", "add.u32 %r17, %r17, %r16;", f"ld.local.b32 {self.r()}, [%r17];"]
    if kind == "if":   # diverges inside a warp: threads by tid bit
      els, end = self.label(), self.label()
      bit = self.rng.randint(0, 5)
      return [f"and.b32 %r9, %r0, {1 << bit};", "setp.ne.u32 %p3, %r9, 0;", f"@%p3 bra {els};", *self.piece(depth + 1),
              f"bra {end};", f"{els}:", *self.piece(depth + 1), f"{end}:"]
    if kind == "loop":  # tid-dependent trip counts: 1..4, a counter per nesting depth
      top, n = self.label(), f"%r{10 + 5 * depth}"
      return [f"and.b32 {n}, %r0, 3;", f"{top}:", *self.piece(depth + 1), f"sub.u32 {n}, {n}, 1;",
              f"setp.ne.u32 %p4, {n}, -1;", f"@%p4 bra {top};"]
    # every thread writes a register to shared memory; after the barrier it reads another warp's word
    src, dst = self.r(), self.r()
    red = []
    if self.warps:   # a reduction over the CTA at the second barrier
      red = [f"setp.ne.u32 %p6, {self.r()}, 0;", f"bar.red.popc.u32 {self.r()}, 0, %p6;",
             f"bar.red.{self.rng.choice(['and', 'or'])}.pred %p7, 0, !%p6;", f"selp.b32 {self.r()}, {self.r()}, {self.r()}, %p7;"]
    return ["shl.b32 %r11, %r0, 2;", f"st.shared.b32 [%r11+0], {src};", "bar.sync 0;", "xor.b32 %r12, %r0, 33;",
            "and.b32 %r12, %r12, 63;", "shl.b32 %r12, %r12, 2;", f"ld.shared.b32 {dst}, [%r12+0];", *(red or ["bar.sync 0;"])]

def random_kernel(seed:int, warps:bool=False) -> str:
  g = Gen(seed, warps)
  body = []
  for _ in range(g.rng.randint(2, 5)): body += g.piece()
  load = ["mov.u32 %r0, %tid.x;", "mov.u32 %r13, %ctaid.x;", "mad.lo.u32 %r14, %r13, 64, %r0;",
          f"mul.wide.u32 %rd1, %r14, {4 * (NR + NF)};", "ld.param.u64 %rd2, [in0];", "add.s64 %rd2, %rd2, %rd1;",
          "ld.param.u64 %rd3, [out];", "add.s64 %rd3, %rd3, %rd1;"]
  load += [f"ld.global.b32 %r{i + 1}, [%rd2+{4 * i}];" for i in range(NR)]
  load += [f"ld.global.f32 %f{i + 1}, [%rd2+{4 * (NR + i)}];" for i in range(NF)]
  store = [f"st.global.b32 [%rd3+{4 * i}], %r{i + 1};" for i in range(NR)]
  store += [f"st.global.f32 [%rd3+{4 * (NR + i)}], %f{i + 1};" for i in range(NF)]
  regs = ".reg .pred %p<8>;\n.reg .b32 %r<20>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<4>;\n.shared .align 4 .b32 buf[64];\n" + \
         ".local .align 4 .b32 lbuf[4];\n"
  return HEAD + ".visible .entry k(.param .u64 out, .param .u64 in0)\n{\n" + regs + "\n".join(load + body + store) + "\nret;\n}\n"

def _inputs(seed:int) -> np.ndarray:
  rng = np.random.default_rng(seed)
  words = rng.integers(0, 2**32, (128, NR + NF), dtype=np.uint64).astype(np.uint32)
  words[:, :NR][rng.random((128, NR)) < 0.3] = rng.integers(0, 40, 1)[0]   # small values too
  floats = rng.choice([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-40, 3e38], (128, NF)).astype(np.float32)
  floats[rng.random((128, NF)) < 0.5] = rng.standard_normal(1).astype(np.float32) * 100
  words[:, NR:] = floats.view(np.uint32)
  return words

def run_three_ways(src:str, inputs:np.ndarray, monkeypatch, grid=(2, 1, 1), block=(64, 1, 1), c:bool=True, inputs_as=None) -> dict:
  """The output memory from each path (inputs restored between them). inputs_as=LOAD3: the rows of inputs are the
  kernel's in0, in1 (and in2 = in0), the output one row."""
  outs = {}
  for path in ("stepper", "numpy", "C") if c else ("stepper", "numpy"):
    x = inputs.copy()
    out = np.zeros_like(inputs if inputs_as is None else inputs[0])
    l = _launch(src, [out, x] if inputs_as is None else [out, x[0], x[1], x[0]], grid, block)
    monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "1" if path == "C" else "0")
    if path == "stepper": run_stepped(l)
    else: assert launch(l.mem, l.kernel, grid, block, l.params).native == (path == "C")
    outs[path] = out
  return outs

@pytest.mark.parametrize("seed", range(24))
def test_random_programs_same_on_stepper_numpy_and_c(seed, monkeypatch):
  src = random_kernel(seed)
  outs = run_three_ways(src, _inputs(seed), monkeypatch)
  for path in ("numpy", "C"): np.testing.assert_array_equal(outs[path], outs["stepper"], err_msg=f"{path}\n{src}")   # EXACT

@pytest.mark.parametrize("seed", range(24))
def test_random_warp_wide_programs_same_on_stepper_numpy_and_c(seed, monkeypatch):
  """shfl/vote/activemask/redux inside divergent branches and tid-dependent loops, bar.red: the C backend's warp mode
  combines the lanes the numpy path's min-PC scheduling does, and reads the same values of lanes that did not arrive.
  Every fourth seed runs CTAs of 40 threads: a partial second warp."""
  src = random_kernel(seed, warps=True)
  block = (40, 1, 1) if seed % 4 == 3 else (64, 1, 1)
  outs = run_three_ways(src, _inputs(seed), monkeypatch, block=block)   # asserts that the C path ran it
  for path in ("numpy", "C"): np.testing.assert_array_equal(outs[path], outs["stepper"], err_msg=f"{path}\n{src}")   # EXACT

def test_the_stepper_registers_are_what_the_paths_store(monkeypatch):
  """The stepper's own register file at the end equals the memory every path stored from it."""
  src, inputs = random_kernel(3), _inputs(3)
  outs = run_three_ways(src, inputs, monkeypatch, grid=(1, 1, 1))
  out, x = np.zeros_like(inputs), inputs.copy()
  st = stepper(_launch(src, [out, x], (1, 1, 1), (64, 1, 1)))
  at_ret = lambda w: st.program.instr(*st.warp_pc(w)).op == "ret"
  while (w := next((w for w in range(2) if st.runnable(w) and not at_ret(w)), None)) is not None: st.step(w)
  for i in range(NR): np.testing.assert_array_equal(st.reg(f"%r{i + 1}"), outs["C"][:64, i])
  for i in range(NF): np.testing.assert_array_equal(st.reg(f"%f{i + 1}").view(np.uint32), outs["C"][:64, NR + i])

WARP_WIDE = """
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd1, %r0, 4;
ld.param.u64 %rd2, [in0];
add.s64 %rd2, %rd2, %rd1;
ld.param.u64 %rd3, [out];
add.s64 %rd3, %rd3, %rd1;
ld.global.b32 %r1, [%rd2];
and.b32 %r2, %r0, 5;
setp.eq.u32 %p1, %r2, 1;
@%p1 bra SKIP;
shfl.sync.bfly.b32 %r1, %r1, 3, 31, -1;
vote.sync.ballot.b32 %r3, %p1, -1;
add.u32 %r1, %r1, %r3;
SKIP:
shfl.sync.down.b32 %r1, %r1, 1, 31, -1;
st.global.b32 [%rd3], %r1;
"""

def test_warp_wide_instructions_see_the_same_lanes(monkeypatch):
  """shfl and vote after a divergent branch, on the three paths."""
  src = kernel(WARP_WIDE, params=".param .u64 out, .param .u64 in0")
  inputs = np.random.default_rng(0).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
  outs = run_three_ways(src, inputs, monkeypatch, grid=(1, 1, 1))
  for path in ("numpy", "C"): np.testing.assert_array_equal(outs[path], outs["stepper"], err_msg=path)
  assert outs["stepper"].any()

@pytest.mark.parametrize("op", ["max", "min"])
def test_min_max_of_two_nans_is_the_canonical_nan_on_every_path(op, monkeypatch):
  """Found by the random programs: the C path gave the second of two NaNs, numpy's fmax/fmin (and the stepper) the first.
  Hardware gives neither: the canonical NaN 0x7fffffff (tests/compiler/ptx/test_ptx_nan.py)."""
  a = np.array([0x7fc00000, 0xffc00000, 0x7fc00001, 0x3f800000] * 8, np.uint32)
  b = np.array([0xffc00000, 0x7fc00000, 0xffc00000, 0xffc00000] * 8, np.uint32)
  src = kernel(LOAD3 + f"mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\n{op}.f32 %f3, %f1, %f2;\nmov.b32 %r4, %f3;\nst.global.b32 [%rd9], %r4;")
  outs = run_three_ways(src, np.stack([a, b]), monkeypatch, grid=(1, 1, 1), block=(32, 1, 1), inputs_as=LOAD3)
  want = np.where(np.arange(32) % 4 == 3, a, np.uint32(0x7fffffff))   # a NaN and 1.0: the 1.0
  for path in ("stepper", "numpy", "C"): np.testing.assert_array_equal(outs[path], want, err_msg=path)

# *** tinygrad's kernels (its PTX renderer) on the three paths ***

THREE_WAYS_HOOK = """
import os, json, time, numpy as np
from tinygrad import Tensor, dtypes
from mockgpu import events
from mockgpu.emulators import ptx
seen = []
def three_ways(mem, k, grid, block, params, dynamic_shared):
  maps = mem.mappings()
  start = [m.u8().copy() for m in maps]
  after, native = {}, {}
  for path in ("stepper", "numpy", "C"):
    for m, s in zip(maps, start): m.u8()[:] = s
    if path == "stepper":
      t0 = time.perf_counter()
      steps = ptx.run_stepped(ptx.Launch(mem, k, grid, block, params, dynamic_shared))
      took = time.perf_counter() - t0
    else:
      os.environ["MOCKGPU_PTX_NATIVE"] = "1" if path == "C" else "0"
      events.unintercept("ptx_launch", three_ways)
      try: stats = ptx.launch(mem, k, grid, block, params, dynamic_shared)
      finally: events.intercept("ptx_launch", three_ways)
      native[path] = stats.native
    after[path] = [m.u8().copy() for m in maps]
  same = {p: all(np.array_equal(a, b) for a, b in zip(after[p], after["stepper"])) for p in ("numpy", "C")}
  seen.append({"kernel": k.name, "numpy": same["numpy"], "C": same["C"], "ran_c": native["C"], "threads": int(np.prod(grid) * np.prod(block)),
               "steps": steps, "seconds": round(took, 2)})
  return stats
events.intercept("ptx_launch", three_ways)
rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((16, 24)).astype(np.float32)).realize()
y = Tensor(rng.standard_normal((24, 8)).astype(np.float32)).realize()
n = Tensor(rng.integers(-1000, 1000, (16, 24)).astype(np.int32)).realize()
for out in [x + 1, x * x - 3, x.exp2(), (x - 1).log(), x.sqrt(), x @ y, x.sum(axis=1), x.max(axis=0), x.argmax(axis=1),
            (x > 0).where(x, -x), n // 7 + n % 5, (n << 3) ^ n, x.cast(dtypes.half).cast(dtypes.float), x.softmax(axis=1),
            x.cumsum(axis=1)]:
  out.realize()
print("REC", json.dumps(seen))
"""

def test_tinygrad_kernels_same_on_stepper_numpy_and_c():
  """Every launch of a set of tinygrad ops under MOCK+NV:PTX runs on the stepper, the numpy path and the C path from the
  same memory: every mapped byte after it is the same (EXACT)."""
  from conftest import run_tinygrad
  p = run_tinygrad("MOCK+NV:PTX", THREE_WAYS_HOOK, timeout=600)
  seen = next(__import__("json").loads(l[4:]) for l in p.stdout.splitlines() if l.startswith("REC "))
  assert len(seen) >= 15, seen
  assert [s for s in seen if not (s["numpy"] and s["C"])] == []
  assert sum(s["ran_c"] for s in seen) >= len(seen) // 2, seen   # most of them ran C: the comparison is with C

# *** the stepper writes no op's meaning: each instruction is its row as the numpy backend renders it ***

PTX_MEANING = {f"mockgpu.compiler.ptx.{m}" for m in ("semantics", "backends.numpy_runtime", "backends.numpy_names", "backends.collective",
                                                     "backends.bitops", "backends.numerics", "backends.c")}
# the functions of stepper.py allowed arithmetic, for no op: scheduling (threads' pcs, warps, blocks, steps)
PTX_SCHEDULING = {"program_of", "Stepper.__init__", "Stepper._keys", "Stepper._pc_of", "Stepper.warp_pc", "Stepper.warp_threads",
                  "Stepper._pick", "Stepper.step", "Stepper._barrier_threads", "Stepper._run", "Stepper._settle", "Stepper.run",
                  "Stepper.undo"}

def _ptx_scan(source:str) -> list[str]: return findings(source, PTX_MEANING, set(), set(semantics.ROWS), PTX_SCHEDULING)

def test_stepper_writes_no_op_meaning():
  assert _ptx_scan(inspect.getsource(stepper_module)) == []

@pytest.mark.parametrize("handler", [
  '  def shfl(self, ins): return self.names[ins.args[1].name][np.arange(self.n) ^ 1]\n',     # arithmetic
  '  def op(self, ins): return ins.op == "mov"\n',                                            # a dispatch on an opcode
  '  def sel(self, ins):\n    from mockgpu.compiler.ptx.backends.numpy_runtime import shfl\n    return shfl\n'])  # a runtime helper
def test_the_scan_finds_per_op_code(handler):
  source = inspect.getsource(stepper_module)
  assert "class Stepper:\n" in source
  assert _ptx_scan(source.replace("class Stepper:\n", "class Stepper:\n" + handler))
