"""M0-relative moves, computed program counters and s_trap on every RDNA backend: hand-assembled kernels on the numpy
and C paths (rdna_path: the [native] variant asserts C ran) and on the reference stepper, against references written
here from the manual's pseudocode (str_pcode). M0 differs per wave (it is the workgroup ID), so the numpy path's
gathers, scatters and jump tables are exercised across waves of one group."""
from __future__ import annotations
import contextlib, struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, M0, EXEC_LO, NULL
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu import system
from mockgpu.errors import GPUPageFault, KernelTrap, UnsupportedInstruction
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from support.rdna_harness import aligned
from support.rdna_isa import RSRC2, kernel

GRID = 3            # workgroups of one wave: M0 = the workgroup ID, 0..2
NREG = 6            # v2..v7 (s12..s17) are stored, each to its own row of the output
RSRC1 = 0x3 << 16 | 0x3 << 18 | 1  # denormals allowed, VGPR count 1: 16 VGPRs in wave32, 8 in wave64

def setup(lanes:int) -> list:
  """v1 = the lane's output address offset ((wg * NREG) * lanes + lane) * 4; v[2 + k] = lane + 100 k; M0 = wg."""
  return [I.s_mul_i32(s[3], s[2], NREG * lanes * 4), I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.v_add_nc_u32_e32(v[1], s[3], v[1]),
          *[I.v_add_nc_u32_e32(v[2 + k], 100 * k, v[0]) for k in range(NREG)], I.s_mov_b32(M0, s[2])]

def stores(lanes:int) -> list:
  return [I.global_store_b32(addr=v[1], data=v[2 + k], saddr=s[4:5], offset=4 * lanes * k) for k in range(NREG)] + [I.s_endpgm()]

def dispatch(insts, out:np.ndarray, lanes:int, grid:int=GRID, arch:str="rdna3") -> tuple[AddressSpace, Dispatch]:
  code = b"".join(i.to_bytes() for i in insts) + I.s_code_end().to_bytes() * 16
  img = aligned(4096)
  img[:len(code)] = np.frombuffer(code, np.uint8)
  args = aligned(256, 256)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, out.ctypes.data)
  mem = AddressSpace("control")
  for a in (img, args, out): mem.map(a.ctypes.data, a.nbytes)
  dispatch.keep = (img, args)  # alive while the dispatch runs
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  return mem, Dispatch(arch, img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (lanes, 1, 1), (grid, 1, 1), lanes == 32)

def run_fast(insts, lanes:int, grid:int=GRID) -> np.ndarray:
  out = aligned(4 * lanes * NREG * grid, 256).view(np.uint32)
  run_dispatch(*dispatch(insts, out, lanes, grid))
  return out.reshape(grid, NREG, lanes)

def run_stepped(insts, lanes:int, grid:int=GRID) -> np.ndarray:
  out = aligned(4 * lanes * NREG * grid, 256).view(np.uint32)
  mem, d = dispatch(insts, out, lanes, grid)
  first = None
  for wg in range(grid):
    st = executor.stepper(mem, d, workgroup=wg, like=first)
    first = first or st
    st.run()
  return out.reshape(grid, NREG, lanes)

@contextlib.contextmanager
def on(path:str, monkeypatch, arch:str="rdna3"):
  """Run the body on a path (numpy, native: C from the first dispatch, or stepper: executor.stepper) and check that a
  launch was handed to C exactly on the native path (counted before C runs, so a C run that raises counts)."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  before = system.stats[f"{arch}.native_launches"]
  yield run_stepped if path == "stepper" else run_fast
  assert (system.stats[f"{arch}.native_launches"] > before) == (path == "native"), f"{path}: ran on another path"

def initial(lanes:int) -> list[np.ndarray]:
  return [np.arange(lanes, dtype=np.uint64) + 100 * k for k in range(NREG)]

# *** VGPR moves: each case (instruction, its reference on one wave's v2..v7 with M0 = m0) ***

def ref_vmove(regs, dst:int, src:int, active, swap=False):
  out = [r.copy() for r in regs]
  out[dst - 2] = np.where(active, regs[src - 2], regs[dst - 2])
  if swap: out[src - 2] = np.where(active, regs[dst - 2], regs[src - 2])
  return out

M0_2 = lambda g: g | (2 - g) << 16  # s_movrelsd_2 / v_swaprel: source offset M0[9:0], destination offset M0[25:16]
VCASES = {
  "movrels": (I.v_movrels_b32_e32(v[7], v[2]), None, lambda r, g, a: ref_vmove(r, 7, 2 + g, a)),
  "movrels_e64": (I.v_movrels_b32_e64(v[7], v[2]), None, lambda r, g, a: ref_vmove(r, 7, 2 + g, a)),
  "movreld": (I.v_movreld_b32_e32(v[2], v[6]), None, lambda r, g, a: ref_vmove(r, 2 + g, 6, a)),
  "movreld_const": (I.v_movreld_b32_e64(v[3], 0x1234), None, lambda r, g, a: [np.where(a, 0x1234, x) if k == 1 + g else x for k, x in enumerate(r)]),
  "movrelsd": (I.v_movrelsd_b32_e32(v[3], v[2]), None, lambda r, g, a: ref_vmove(r, 3 + g, 2 + g, a)),
  "movrelsd_2": (I.v_movrelsd_2_b32_e32(v[2], v[3]), M0_2, lambda r, g, a: ref_vmove(r, 2 + 2 - g, 3 + g, a)),
  "swaprel": (I.v_swaprel_b32_e32(v[2], v[3]), M0_2, lambda r, g, a: ref_vmove(r, 2 + 2 - g, 3 + g, a, swap=True)),
}

def vkernel(inst, m0, lanes:int, half_exec:bool) -> list:
  body = setup(lanes)
  if m0 is not None: body += [I.s_lshl_b32(s[8], s[2], 16), I.s_sub_u32(s[8], 2 << 16, s[8]), I.s_or_b32(M0, s[2], s[8])]
  if half_exec: body += [I.s_mov_b32(EXEC_LO, 0xffff)]
  body += [inst]
  if half_exec: body += [I.s_mov_b32(EXEC_LO, 0xffffffff)]
  return kernel(*body, *stores(lanes))

def vexpected(ref, lanes:int, half_exec:bool) -> np.ndarray:
  active = np.arange(lanes) < 16 if half_exec else np.ones(lanes, bool)
  return np.stack([np.stack(ref(initial(lanes), g, active)) for g in range(GRID)]).astype(np.uint32)

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("lanes, half_exec", [(32, False), (32, True), (64, False)])
@pytest.mark.parametrize("case", VCASES)
def test_vgpr_relative_moves(case, lanes, half_exec):
  inst, m0, ref = VCASES[case]
  got = run_fast(vkernel(inst, m0, lanes, half_exec), lanes)
  np.testing.assert_array_equal(got, vexpected(ref, lanes, half_exec))

@pytest.mark.parametrize("case", ["movrels", "movreld", "swaprel"])
def test_vgpr_relative_moves_on_the_stepper(case):
  inst, m0, ref = VCASES[case]
  np.testing.assert_array_equal(run_stepped(vkernel(inst, m0, 32, True), 32), vexpected(ref, 32, True))

# *** SGPR moves: s12..s17 = 1000 + k + 16 wg, read back through v2..v7 ***

def skernel(insts, m0=None) -> list:
  body = setup(32) + [I.s_lshl_b32(s[9], s[2], 4)]
  body += [I.s_add_u32(s[12 + k], s[9], 1000 + k) for k in range(NREG)]
  if m0 is not None: body += [I.s_lshl_b32(s[8], s[2], 16), I.s_sub_u32(s[8], 2 << 16, s[8]), I.s_or_b32(M0, s[2], s[8])]
  body += [*insts, *[I.v_mov_b32_e32(v[2 + k], s[12 + k]) for k in range(NREG)]]
  return kernel(*body, *stores(32))

def sexpected(move) -> np.ndarray:
  out = np.zeros((GRID, NREG, 32), np.uint32)
  for g in range(GRID):
    regs = {12 + k: 1000 + k + 16 * g for k in range(NREG)}
    move(regs, g)
    out[g] = np.array([regs[12 + k] for k in range(NREG)], np.uint32)[:, None]
  return out

def _set(regs, d, x): regs[d] = x
SCASES = {
  "movrels": ([I.s_movrels_b32(s[12], s[13])], None, lambda r, g: _set(r, 12, r[13 + g])),
  "movreld": ([I.s_movreld_b32(s[13], s[12])], None, lambda r, g: _set(r, 13 + g, r[12])),
  "movreld_b64": ([I.s_movreld_b64(s[12:13], 0xabcdef)], None, lambda r, g: (_set(r, 12 + g, 0xabcdef), _set(r, 13 + g, 0))),
  "movrelsd_2": ([I.s_movrelsd_2_b32(s[12], s[13])], M0_2, lambda r, g: _set(r, 12 + 2 - g, r[13 + g])),
}

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("case", SCASES)
def test_sgpr_relative_moves(case):
  insts, m0, ref = SCASES[case]
  np.testing.assert_array_equal(run_fast(skernel(insts, m0), 32), sexpected(ref))

@pytest.mark.usefixtures("rdna_path")
def test_sgpr_relative_pair():
  """s_movrels_b64 s[12:13], s[14:15] with M0 = wg: the pair from s[14 + wg]."""
  def ref(r, g): r[12], r[13] = r[14 + g], r[15 + g]
  np.testing.assert_array_equal(run_fast(skernel([I.s_movrels_b64(s[12:13], s[14:15])]), 32), sexpected(ref))

def test_sgpr_relative_moves_on_the_stepper():
  insts, m0, ref = SCASES["movrelsd_2"]
  np.testing.assert_array_equal(run_stepped(skernel(insts, m0), 32), sexpected(ref))

# *** an index past the registers the wave may reach: a named error with the index, on every path ***

BOUNDS = [(I.v_movrels_b32_e32(v[7], v[2]), 14, 16, "v_movrels_b32"),   # v[2 + 14] past the wave's 16 VGPRs
          (I.s_movreld_b32(s[100], s[12]), 6, 106, "s_movreld_b32"),     # s[106] is VCC: not in the indexed file
          (I.s_movrels_b64(s[12:13], s[104:105]), 1, 106, "s_movrels_b64")]  # the pair s[105:106] crosses the end

@pytest.mark.parametrize("inst, m0, limit, name", BOUNDS)
@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_relative_index_past_the_registers_raises(inst, m0, limit, name, path, monkeypatch):
  body = kernel(*setup(32), I.s_add_u32(M0, s[2], m0), inst, *stores(32))
  index = {"v_movrels_b32": m0 + 2, "s_movreld_b32": 100 + m0, "s_movrels_b64": 104 + m0}[name]
  with on(path, monkeypatch) as go, pytest.raises(UnsupportedInstruction,
                                                  match=rf"{name}: M0-relative register index {index} is past the {limit} registers .* at PC 0x"):
    go(body, 32, grid=1)

# *** computed program counters ***

def jump_kernel(kind:str) -> list:
  """v2 = 3 - wg by a per-wave jump into a run of three increments (a jump table: each wave a different target), then
  a subroutine call; kinds: setpc (s_getpc + offset), swappc (a call through s_swappc, return by s_setpc), call
  (s_call_b64, return by s_setpc)."""
  inc = I.v_add_nc_u32_e32(v[2], 1, v[2])
  head = kernel(*setup(32), I.v_mov_b32_e32(v[2], 0), I.v_mov_b32_e32(v[3], 0))
  table = [I.s_getpc_b64(s[8:9]), I.s_lshl_b32(s[10], s[2], 2), I.s_add_u32(s[8], s[8], s[10]), I.s_addc_u32(s[9], s[9], 0),
           I.s_add_u32(s[8], s[8], 24), I.s_addc_u32(s[9], s[9], 0), I.s_setpc_b64(ssrc0=s[8:9])]  # the six after s_getpc: 24 bytes
  body = table + [inc, inc, inc]
  sub = [I.v_add_nc_u32_e32(v[3], 40, v[3]), I.v_add_nc_u32_e32(v[3], 2, v[3]), I.s_setpc_b64(ssrc0=s[30:31])]
  if kind == "setpc": tail = stores(32)
  elif kind == "swappc":
    # s_getpc s[8:9]; s_add s8, s8, K; s_addc; s_swappc s[30:31], s[8:9]; then the stores; the subroutine after them
    call = [I.s_getpc_b64(s[8:9]), I.s_add_u32(s[8], s[8], 0), I.s_addc_u32(s[9], s[9], 0), I.s_swappc_b64(s[30:31], s[8:9])]
    rest = stores(32)
    for _ in range(2): call[1] = I.s_add_u32(s[8], s[8], sum(i.size() for i in call[1:] + rest))  # a literal's size settles
    tail = call + rest + sub
  else:
    rest = stores(32)
    call = [I.s_call_b64(s[30:31], simm16=sum(i.size() for i in rest) // 4)]
    tail = call + rest + sub
  return head + body + tail

def jump_expected(call:bool) -> np.ndarray:
  out = np.stack([np.stack(initial(32)) for _ in range(GRID)]).astype(np.uint32)
  for g in range(GRID):
    out[g, 0] = 3 - g
    out[g, 1] = 42 if call else 0
  return out

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("kind", ["setpc", "swappc", "call"])
def test_computed_jumps(kind):
  np.testing.assert_array_equal(run_fast(jump_kernel(kind), 32), jump_expected(kind != "setpc"))

@pytest.mark.parametrize("kind", ["setpc", "swappc", "call"])
def test_computed_jumps_on_the_stepper(kind):
  np.testing.assert_array_equal(run_stepped(jump_kernel(kind), 32), jump_expected(kind != "setpc"))

def bad_jump_kernel(offset:int) -> list:
  return kernel(*setup(32), I.s_getpc_b64(s[8:9]), I.s_add_u32(s[8], s[8], offset), I.s_addc_u32(s[9], s[9], 0),
                I.s_setpc_b64(ssrc0=s[8:9]), *stores(32))

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_jump_to_no_instruction_raises(path, monkeypatch):
  """Into the middle of an instruction (s_add_u32's literal): named, with the target; outside every mapping: the
  instruction-fetch fault of a kernel entry outside memory."""
  with on(path, monkeypatch) as go, pytest.raises(UnsupportedInstruction,
                                                  match=r"s_setpc_b64: computed jump to 0x[0-9a-f]+ \(kernel offset \+0x[0-9a-f]+\), "
                                                  r"which is not an instruction of the decoded program at PC 0x"):
    go(bad_jump_kernel(2), 32, grid=1)
  with on(path, monkeypatch) as go, pytest.raises(GPUPageFault, match=r"instruction fetch at PC 0x[0-9a-f]+, the target of s_setpc_b64 at PC 0x"):
    go(bad_jump_kernel(1 << 30), 32, grid=1)

# *** s_trap ***

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_trap_stops_the_dispatch_naming_pc_and_id(path, monkeypatch):
  body = kernel(*setup(32), I.s_trap(simm16=0x105), *stores(32))  # the trap ID is SIMM16[7:0]
  with on(path, monkeypatch) as go, pytest.raises(KernelTrap, match=r"s_trap 5: the wave trapped \(trap ID 5\).* at PC 0x[0-9a-f]+"):
    go(body, 32, grid=1)

# *** the other families: RDNA4 (VOP1 and SOP1 forms, M0 from the workgroup ID in ttmp9) and CDNA (wave64, SOP1 only:
# tinygrad's cdna tables have no v_movrel*; GFX9's M0 is operand 124) ***

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_rdna4_relative_moves_and_jump(path, monkeypatch):
  from tinygrad.runtime.autogen.amd.rdna4 import ins as I4
  from tinygrad.renderer.amd.dsl import ttmp
  import support.rdna4 as r4
  out = aligned(4 * 32 * 3 * GRID, 256).view(np.uint32)
  body = r4.kernel(
    I4.s_mul_i32(s[3], ttmp[9], 3 * 128), I4.v_lshlrev_b32_e32(v[1], 2, v[0]), I4.v_add_nc_u32_e32(v[1], s[3], v[1]),
    *[I4.v_add_nc_u32_e32(v[2 + k], 100 * k, v[0]) for k in range(3)], I4.s_mov_b32(M0, ttmp[9]),
    I4.v_movrels_b32_e32(v[5], v[2]),                                                 # v5 = v[2 + wg]
    I4.s_add_co_u32(s[12], ttmp[9], 7), I4.s_movreld_b32(s[20], s[12]), I4.s_mov_b32(s[30], 0), I4.s_mov_b32(s[31], 0),
    I4.s_movrels_b32(s[13], s[20]), I4.v_mov_b32_e32(v[6], s[13]),                    # s[20 + wg] = wg + 7, read back
    I4.s_getpc_b64(s[8:9]), I4.s_add_co_u32(s[8], s[8], 20), I4.s_add_co_ci_u32(s[9], s[9], 0), I4.s_setpc_b64(ssrc0=s[8:9]),
    I4.v_mov_b32_e32(v[6], 0xdead),                                                   # jumped over (8 bytes)
    I4.v_mov_b32_e32(v[7], v[5]),
    *[I4.global_store_b32(vaddr=v[1:2], vsrc=v[5 + k], saddr=s[4:5], ioffset=128 * k) for k in range(3)], I4.s_endpgm(),
    I4.s_code_end())
  r4.run(body, out, path=path, monkeypatch=monkeypatch, grid=(GRID, 1, 1), rsrc1=RSRC1)
  got = out.reshape(GRID, 3, 32)
  for g in range(GRID):
    np.testing.assert_array_equal(got[g, 0], np.arange(32) + 100 * g)
    np.testing.assert_array_equal(got[g, 1], np.full(32, g + 7))
    np.testing.assert_array_equal(got[g, 2], np.arange(32) + 100 * g)

class Undecodable:
  """A word no GFX9 format decodes: it ends the sweep of code after s_endpgm, as s_code_end does on gfx10+ (gfx9 has
  none)."""
  def to_bytes(self) -> bytes: return (0xffffffff).to_bytes(4, "little")

@pytest.mark.parametrize("family", ["cdna3", "cdna4"])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_cdna_scalar_relative_moves_jump_and_trap(family, path, monkeypatch):
  from tinygrad.runtime.autogen.amd.cdna import ins as I9
  import support.cdna_exec as cx
  m0 = NULL  # GFX9's M0 is operand 124, the DSL's NULL
  out = aligned(4 * 64 * 2 * GRID, 256).view(np.uint32)
  body = cx.kernel(
    I9.s_mul_i32(s[3], s[2], 2 * 256), I9.v_add_u32_e32(v[1], s[3], v[1]), I9.s_mov_b32(m0, s[2]),
    *[I9.s_add_u32(s[12 + k], s[2], 1000 + 10 * k) for k in range(4)],
    I9.s_movrels_b32(s[10], s[12]), I9.v_mov_b32_e32(v[2], s[10]),                   # s[12 + wg]
    I9.s_mov_b32(s[20], 0x1234), I9.s_mov_b32(s[21], 0x5678), I9.s_movreld_b64(s[12:13], s[20:21]),
    I9.s_getpc_b64(s[8:9]), I9.s_add_u32(s[8], s[8], 20), I9.s_addc_u32(s[9], s[9], 0), I9.s_setpc_b64(ssrc0=s[8:9]),
    I9.s_mov_b32(s[14], 0xdead),                                                     # jumped over (8 bytes)
    I9.v_mov_b32_e32(v[3], s[14]), *cx.store(v[2], 0), *cx.store(v[3], 1), I9.s_endpgm(), Undecodable())
  cx.run(body, out, path=path, monkeypatch=monkeypatch, family=family, grid=(GRID, 1, 1), rsrc1=RSRC1)
  got = out.reshape(GRID, 2, 64)
  for g in range(GRID):
    regs = {12 + k: g + 1000 + 10 * k for k in range(4)}
    np.testing.assert_array_equal(got[g, 0], np.full(64, regs[12 + g]))
    regs[12 + g], regs[13 + g] = 0x1234, 0x5678                                      # the pair s[12 + wg : 13 + wg]
    np.testing.assert_array_equal(got[g, 1], np.full(64, regs[14]))
  with pytest.raises(KernelTrap, match=r"s_trap 3: the wave trapped \(trap ID 3\)"):
    cx.run(cx.kernel(I9.s_trap(simm16=3), I9.s_endpgm()), out, path=path, monkeypatch=monkeypatch, family=family)

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_rdna4_trap_id_is_simm16_3_0(path, monkeypatch):
  """gfx12's s_trap: TrapID = SIMM16[3:0] (RDNA3: [7:0])."""
  from tinygrad.runtime.autogen.amd.rdna4 import ins as I4
  import support.rdna4 as r4
  out = aligned(4 * 32, 256).view(np.uint32)
  with on(path, monkeypatch, "rdna4"), pytest.raises(KernelTrap, match=r"s_trap 5: the wave trapped \(trap ID 5\)"):
    r4.run(r4.kernel(I4.s_trap(simm16=0x15), I4.s_endpgm()), out)

@pytest.mark.parametrize("path", ["numpy", "native", "stepper"])
def test_getpc_and_return_addresses(path, monkeypatch):
  """s_getpc_b64: D = PC + 4 (the next instruction's address); s_swappc_b64 and s_call_b64: D = PC + 4 too (the
  return address), the target read before D is written (s_swappc names one pair as both)."""
  head = kernel(*setup(32))
  getpc = len(b"".join(i.to_bytes() for i in head))
  body = head + [I.s_getpc_b64(s[8:9]), I.s_add_u32(s[8], s[8], 8), I.s_addc_u32(s[9], s[9], 0),
                 I.s_swappc_b64(s[8:9], s[8:9]),                      # to the next instruction; s[8:9] = its address
                 I.s_call_b64(s[10:11], simm16=0),                   # to the next instruction; s[10:11] = its address
                 *[I.v_mov_b32_e32(v[2 + k], s[8 + k]) for k in range(4)], *stores(32)]
  out = aligned(4 * 32 * NREG, 256).view(np.uint32)
  mem, d = dispatch(body, out, 32, grid=1)
  with on(path, monkeypatch):
    if path == "stepper": executor.stepper(mem, d).run()
    else: run_dispatch(mem, d)
  got = out.reshape(NREG, 32)[:4, 0].astype(np.uint64)
  swappc = d.pgm_addr + getpc + 4 + 4 + 4  # s_getpc, s_add (inline 8), s_addc
  assert got[0] | got[1] << 32 == swappc + 4 and got[2] | got[3] << 32 == swappc + 8
