"""RDNA3 atomics (FLAT/GLOBAL and DS read-modify-writes) on the numpy path, the C path and the reference stepper,
against the ISA manual's pseudocode (tests/pcode's evaluator, independent of mockgpu's table) run lane after lane
over one shared memory: many lanes, waves and workgroups hit the same words, so the final words and every returned
old value must be those of the serial order hardware defines for one instruction (lanes in order, then waves,
then workgroups). Also: faults (an unmapped or misaligned atomic names the instruction) and the numpy path's
associative prefix scan against its serial loop."""
from __future__ import annotations
import struct
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs
from tinygrad.renderer.amd.dsl import s, v, VCC_LO, EXEC_LO, NULL as NULL_S
from tinygrad.runtime.autogen.amd.rdna3 import ins as I, enum as E
from tinygrad.runtime.autogen.amd.rdna3.str_pcode import PCODE
from mockgpu import system
from mockgpu.errors import GPUPageFault
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch, executor
from pcode import interp
from support.rdna_harness import aligned
from support.rdna_isa import RSRC1, RSRC2

CALLS = interp.calls_for(PCODE)
BLOCK, GRID = (48, 1, 1), (2, 1, 1)   # two workgroups of a full and a half wave: 96 lanes, 4 waves
LANES = BLOCK[0] * GRID[0]
WORDS = 3                              # the words each op's lanes share (lane g updates word g % WORDS)
REC = 32                               # bytes of a lane's input record: 4 data dwords, then its word's byte offset

class Shared:
  """Byte-addressed memory for the pseudocode's MEM[...]: one dict shared by every lane (the serial reference)."""
  def __init__(self, base:int, data:bytes): self.bytes = {base + i: b for i, b in enumerate(data)}
  def read(self, addr:int, n:int) -> int: return sum(self.bytes[addr + i] << (8 * i) for i in range(n))
  def write(self, addr:int, n:int, bits:int, fields=()):
    for i in range(n): self.bytes[addr + i] = (int(bits) >> (8 * i)) & 0xff

def word_bytes(name:str) -> int: return 8 if name.endswith("64") else 4
def data_dwords(name:str) -> int: return word_bytes(name) // 4 * (2 if "CMP" in name or "MSKOR" in name or "WRAP" in name else 1)

SPECIAL32 = [0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 5]
FLOATS = [0.0, -0.0, 1.0, -1.5, 3.25, 1e30, -1e-30, 2.0**-126, 0.1, -7.0]

def values(rng, name:str, n:int) -> np.ndarray:
  """n words (uint64, the low half for 32-bit ops) that make the op's interesting cases meet: small counters for
  inc/dec/wrap, a few values for cmpswap so compares succeed, finite floats for the float ops (NaN: test_rdna_atomics
  leaves min/max's NaN rule to the conformance suite's DS rows, expected_mismatches.txt)."""
  wide = word_bytes(name) == 8
  if name.endswith("F32") or name.endswith("F64"):
    f = rng.choice(FLOATS, n) if "CMP" in name else rng.choice(FLOATS + list(rng.standard_normal(8) * 100), n)
    return (np.asarray(f, np.float64).view(np.uint64) if wide else np.asarray(f, np.float32).view(np.uint32).astype(np.uint64))
  if any(k in name for k in ("INC", "DEC", "WRAP", "CMP", "CSUB")): return rng.integers(0, 6, n).astype(np.uint64)
  pool = SPECIAL32 + [int(x) for x in rng.integers(0, 2**32, 8)]
  lo = np.asarray(rng.choice(pool, n), np.uint64)
  return lo | (np.asarray(rng.choice(pool, n), np.uint64) << np.uint64(32)) if wide else lo

def global_ops() -> list[str]: return [op.name for op in E.GLOBALOp if "ATOMIC" in op.name]

def _atomic(name:str, **kw):
  """The DSL instruction (its register check counts a cmpswap's vdst as one register: give it one)."""
  fn = getattr(I, name.lower())
  try: return fn(**kw)
  except TypeError: return fn(**{**kw, "vdst": v[kw["vdst"].offset - 256]})

def global_kernel(names:list[str]) -> bytes:
  """Each op in turn: every lane loads its record (data, word offset) from `in`, runs the op with GLC on `target`
  (saddr form; a BUFFER_ op through a raw V# whose base is target, stride 0, NUM_RECORDS past the words, OOB_SELECT 3,
  the word offset as its OFFEN VGPR) and stores the returned dwords to `out`; then the three bases move to the next
  op's region."""
  code = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_load_b64(sdata=s[8:9], sbase=s[0:1], offset=16),
          I.s_waitcnt(simm16=0), I.s_mul_i32(s[10], s[2], BLOCK[0]), I.v_add_nc_u32_e32(v[1], s[10], v[0]),
          I.v_lshlrev_b32_e32(v[9], 4, v[1]), I.v_lshlrev_b32_e32(v[1], 5, v[1])]
  for name in names:
    code += [I.global_load_b128(vdst=v[4:7], addr=v[1], saddr=s[6:7], offset=0),
             I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=16), I.v_mov_b32_e32(v[10], 0),
             I.v_mov_b32_e32(v[11], 0), I.s_waitcnt(simm16=0)]
    nd = data_dwords(name)
    data = v[4:4 + nd - 1] if nd > 1 else v[4]
    if name.startswith("BUFFER_"):
      code += [I.s_mov_b32(s[12], s[8]), I.s_and_b32(s[13], s[9], 0xffff), I.s_mov_b32(s[14], WORDS * 8), I.s_mov_b32(s[15], 3 << 28),
               getattr(I, name.lower())(vdata=data, vaddr=v[2], srsrc=s[12:15], soffset=NULL_S, offset=0, offen=1, glc=1)]
    elif name.startswith("FLAT_"):  # a 64-bit address: target + the word offset
      code += [I.v_add_co_u32(v[12], VCC_LO, s[8], v[2]), I.v_mov_b32_e32(v[14], 0), I.v_add_co_ci_u32_e32(v[13], s[9], v[14]),
               _atomic(name, vdst=v[10:11] if word_bytes(name) == 8 else v[10], addr=v[12:13], data=data, offset=0, glc=1)]
    else: code.append(_atomic(name, vdst=v[10:11] if word_bytes(name) == 8 else v[10], addr=v[2], data=data, saddr=s[8:9], offset=0, glc=1))
    ret = v[4:5] if name.startswith("BUFFER_") else v[10:11]  # MUBUF returns into VDATA
    code += [I.s_waitcnt(simm16=0), I.global_store_b64(addr=v[9], data=ret, saddr=s[4:5], offset=0)]
    for lo, step in ((6, LANES * REC), (4, LANES * 16), (8, WORDS * 8)):
      code += [I.s_add_u32(s[lo], s[lo], step), I.s_addc_u32(s[lo + 1], s[lo + 1], 0)]
  code.append(I.s_endpgm())
  return b"".join(i.to_bytes() for i in code)

class Setup:
  """The buffers of one run: in (records), out (returned dwords), target (the words), mapped in an AddressSpace."""
  def __init__(self, names:list[str], seed:int):
    rng = np.random.default_rng([seed, len(names)])
    self.names, n = names, len(names)
    self.rec = aligned(n * LANES * REC, 256).view(np.uint32).reshape(n, LANES, REC // 4)
    self.out = aligned(n * LANES * 16, 256).view(np.uint32).reshape(n, LANES, 4)
    self.target = aligned(n * WORDS * 8, 256).view(np.uint64).reshape(n, WORDS)
    for i, name in enumerate(names):
      nd = data_dwords(name)
      vals = [values(rng, name, LANES) for _ in range(nd * 4 // word_bytes(name))]
      words = np.stack([x for w in vals for x in ((w & 0xffffffff, w >> np.uint64(32)) if word_bytes(name) == 8 else (w,))], 1)
      self.rec[i, :, :nd] = words.astype(np.uint32)
      self.rec[i, :, 4] = (np.arange(LANES) % WORDS) * word_bytes(name)
      self.target[i] = values(rng, name, WORDS)
    self.start = self.target.copy()

  def dispatch(self, code:bytes, lds:int=0, block=BLOCK, extra=()) -> tuple[AddressSpace, Dispatch]:
    img, args = aligned(len(code) + 256), aligned(256, 256)
    img[:len(code)] = np.frombuffer(code, np.uint8)
    struct.pack_into("<QQQ", args, 0, self.out.ctypes.data, self.rec.ctypes.data, self.target.ctypes.data)
    for k, a in enumerate(extra): struct.pack_into("<Q", args, 24 + 8 * k, a.ctypes.data)
    mem = AddressSpace("atomics")
    for a in (img, args, self.rec, self.out, self.target, *extra): mem.map(a.ctypes.data, a.nbytes)
    self.keep = (img, args)
    user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
    lds_granules = -(-lds // 512)
    return mem, Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2 | lds_granules << 15, 0, user, 0, 0, block, GRID, True)

  def reset(self):
    self.target[:] = self.start
    self.out[:] = 0

def reference(st:Setup, i:int, name:str) -> tuple[np.ndarray, np.ndarray]:
  """The op's pseudocode run lane after lane (workgroup, wave, lane order) on one shared memory: the final words and
  each lane's RETURN_DATA (as two dwords)."""
  enum = {"BUFFER": E.MUBUFOp, "FLAT": E.FLATOp}.get(name.split("_")[0], E.GLOBALOp)
  # FLAT_ATOMIC_CSUB_U32 has no pseudocode in tinygrad's table: GLOBAL_ATOMIC_CSUB_U32's (the same operation)
  prog = interp.Program(PCODE.get(getattr(enum, name)) or PCODE[getattr(E.GLOBALOp, "GLOBAL" + name[4:])], CALLS)
  nb = word_bytes(name)
  mem = Shared(0, st.start[i].tobytes())
  ret = np.zeros((LANES, 2), np.uint32)
  for g in range(LANES):
    rec = [int(x) for x in st.rec[i, g]]
    data = sum(rec[j] << (32 * j) for j in range(data_dwords(name)))
    env = interp.Env({"ADDR": rec[4], "DATA": data, "RETURN_DATA": 0, "laneId": g % 32, "WAVE_MODE_IEEE": 1}, mem=mem)
    prog.run(env)
    r = interp.as_bits(env.vars["RETURN_DATA"]) & ((1 << (8 * nb)) - 1)
    ret[g] = (r & 0xffffffff, r >> 32)
  return np.array([mem.read(k * nb, nb) for k in range(WORDS)], np.uint64), ret

def words(st:Setup, i:int, name:str) -> np.ndarray:
  """The op's words after the run (32-bit ops use the first WORDS dwords of its region)."""
  return st.target[i] if word_bytes(name) == 8 else st.target[i].view(np.uint32)[:WORDS].astype(np.uint64)

def run_path(st:Setup, code:bytes, path:str, monkeypatch, lds:int=0, block=BLOCK, extra=()):
  st.reset()
  mem, d = st.dispatch(code, lds, block, extra)
  if path == "stepper":  # the reference stepper: each wave alone, in the order the C path runs them
    waves = -(-block[0] // 32)
    for g in range(GRID[0]):
      for w in range(waves): executor.stepper(mem, d, g, w).run()
    return
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  before = system.stats["rdna3.native_launches"]
  run_dispatch(mem, d)
  assert (system.stats["rdna3.native_launches"] > before) == (path == "native"), f"{path}: the C path {'did not run' if path == 'native' else 'ran'}"

PATHS = ("numpy", "native", "stepper")

@pytest.mark.parametrize("path,seg", [(p, g) for p in PATHS for g in ("GLOBAL", "FLAT")] + [("numpy", "BUFFER"), ("stepper", "BUFFER")])
def test_global_atomics_serial_as_the_pseudocode(path, seg, monkeypatch):
  """Every RDNA3 GLOBAL_ATOMIC_* and FLAT_ATOMIC_* (with GLC: the old value returned) with 32 lanes on each word, 4
  waves, 2 workgroups; and every BUFFER_ATOMIC_* the same way through a raw V# (numpy and the stepper: C leaves buffer
  kernels to numpy)."""
  enum = {"GLOBAL": E.GLOBALOp, "FLAT": E.FLATOp, "BUFFER": E.MUBUFOp}[seg]
  names = [op.name for op in enum if "ATOMIC" in op.name]
  st = Setup(names, 1)
  run_path(st, global_kernel(names), path, monkeypatch)
  bad = []
  for i, name in enumerate(names):
    final, ret = reference(st, i, name)
    if not (words(st, i, name) == final).all(): bad.append(f"{name}: words {words(st, i, name)} != pseudocode {final}")
    got = st.out[i, :, :2] if word_bytes(name) == 8 else st.out[i, :, :1]
    if not (got == ret[:, :got.shape[1]]).all():
      g = int(np.argmax((got != ret[:, :got.shape[1]]).any(1)))
      bad.append(f"{name}: lane {g} returned {got[g]}, pseudocode {ret[g, :got.shape[1]]}")
  assert not bad, "\n".join(bad)

# *** DS: the lanes of a workgroup share its LDS words ***

def ds_ops() -> list[str]:
  """The single-address DS read-modify-writes (the two-address and condxchg forms: the conformance suite, per lane)."""
  return [op.name for op in E.DSOp if op.name.startswith(("DS_ADD_", "DS_SUB_U", "DS_SUB_RTN_U", "DS_RSUB", "DS_INC", "DS_DEC", "DS_MIN", "DS_MAX",
                                                          "DS_AND", "DS_OR", "DS_XOR", "DS_MSKOR", "DS_CMPSTORE", "DS_WRAP", "DS_STOREXCHG_RTN"))
          and "GS_REG" not in op.name and op.name != "DS_ORDERED_COUNT"]

REGION = 24  # LDS bytes of one op's words (three 64-bit words, or the first three dwords for 32-bit ops)

def ds_kernel(names:list[str], block) -> bytes:
  """Lanes 0-5 of each workgroup copy the start words into LDS, a barrier, then each op in turn as global_kernel
  (the record's word offset plus the op's region as the instruction's offset), a barrier, and lanes 0-5 copy the
  final words out to `final` (the 4th kernel argument, one region per workgroup)."""
  n = len(names)
  code = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_load_b128(sdata=s[8:11], sbase=s[0:1], offset=16),
          I.s_waitcnt(simm16=0), I.s_mul_i32(s[16], s[2], block[0]), I.v_add_nc_u32_e32(v[1], s[16], v[0]),
          I.v_lshlrev_b32_e32(v[9], 4, v[1]), I.v_lshlrev_b32_e32(v[1], 5, v[1]), I.v_lshlrev_b32_e32(v[3], 2, v[0]),
          I.s_mul_i32(s[17], s[2], n * REGION), I.v_add_nc_u32_e32(v[21], s[17], v[3]),
          I.v_cmp_gt_u32_e32(6, v[0]), I.s_and_saveexec_b32(s[14], VCC_LO)]
  for i in range(n):
    code += [I.global_load_b32(vdst=v[20], addr=v[3], saddr=s[8:9], offset=i * REGION), I.s_waitcnt(simm16=0),
             I.ds_store_b32(addr=v[3], data0=v[20], offset0=(i * REGION) & 0xff, offset1=(i * REGION) >> 8)]
  code += [I.s_mov_b32(EXEC_LO, s[14]), I.s_waitcnt(simm16=0), I.s_barrier()]
  for name in names:
    i = names.index(name)
    code += [I.global_load_b128(vdst=v[4:7], addr=v[1], saddr=s[6:7], offset=0),
             I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[6:7], offset=16), I.v_mov_b32_e32(v[10], 0),
             I.v_mov_b32_e32(v[11], 0), I.s_waitcnt(simm16=0)]
    wide = word_bytes(name) == 8
    kw = {"addr": v[2], "data0": v[4:5] if wide else v[4], "offset0": (i * REGION) & 0xff, "offset1": (i * REGION) >> 8}
    if data_dwords(name) > word_bytes(name) // 4: kw["data1"] = v[6:7] if wide else v[5]
    if "_RTN" in name: kw["vdst"] = v[10:11] if wide else v[10]
    code += [_atomic(name, **kw), I.s_waitcnt(simm16=0), I.global_store_b64(addr=v[9], data=v[10:11], saddr=s[4:5], offset=0)]
    for lo, step in ((6, LANES * REC), (4, LANES * 16)):
      code += [I.s_add_u32(s[lo], s[lo], step), I.s_addc_u32(s[lo + 1], s[lo + 1], 0)]
  code += [I.s_waitcnt(simm16=0), I.s_barrier(), I.v_cmp_gt_u32_e32(6, v[0]), I.s_and_saveexec_b32(s[14], VCC_LO)]
  for i in range(n):
    code += [I.ds_load_b32(vdst=v[20], addr=v[3], offset0=(i * REGION) & 0xff, offset1=(i * REGION) >> 8), I.s_waitcnt(simm16=0),
             I.global_store_b32(addr=v[21], data=v[20], saddr=s[10:11], offset=i * REGION)]
  return b"".join(x.to_bytes() for x in code + [I.s_endpgm()])

def ds_reference(st:Setup, names:list[str], block) -> tuple[np.ndarray, np.ndarray]:
  """Per workgroup, every op's pseudocode lane after lane over the workgroup's LDS: its final regions (bytes) and
  each lane's RETURN_DATA per op."""
  n = len(names)
  final = np.zeros((GRID[0], n * REGION), np.uint8)
  ret = np.zeros((n, LANES, 2), np.uint32)
  progs = [interp.Program(PCODE[getattr(E.DSOp, name)], CALLS) for name in names]
  for wg in range(GRID[0]):
    mem = Shared(0, b"".join(st.start[i].tobytes() for i in range(n)))
    for i, (name, prog) in enumerate(zip(names, progs)):
      nb = word_bytes(name)
      for g in range(wg * block[0], (wg + 1) * block[0]):
        rec = [int(x) for x in st.rec[i, g]]
        k = nb // 4
        data, data2 = sum(rec[j] << (32 * j) for j in range(k)), sum(rec[k + j] << (32 * j) for j in range(k))
        env = interp.Env({"ADDR": rec[4] + i * REGION, "DATA": data, "DATA2": data2, "RETURN_DATA": 0, "laneId": g % 32,
                          "WAVE_MODE_IEEE": 1, "M0": 0}, mem=mem)
        prog.run(env)
        r = interp.as_bits(env.vars["RETURN_DATA"]) & ((1 << (8 * nb)) - 1)
        ret[i, g] = (r & 0xffffffff, r >> 32)
    final[wg] = [mem.read(b, 1) for b in range(n * REGION)]
  return final, ret

@pytest.mark.parametrize("path,block", [("numpy", BLOCK), ("native", BLOCK), ("stepper", (32, 1, 1))])
def test_ds_atomics_serial_as_the_pseudocode(path, block, monkeypatch):
  """Every single-address DS read-modify-write, 16 to 24 lanes of each workgroup on each word (the stepper runs
  one-wave workgroups: its waves have an LDS each), against the pseudocode lane after lane over the workgroup's LDS."""
  names = ds_ops()
  st = Setup(names, 2)
  final = aligned(GRID[0] * len(names) * REGION, 256)
  run_path(st, ds_kernel(names, block), path, monkeypatch, lds=len(names) * REGION, block=block, extra=(final,))
  want_final, want_ret = ds_reference(st, names, block)
  bad = []
  got_final = final.reshape(GRID[0], -1)
  lanes = GRID[0] * block[0]
  for i, name in enumerate(names):
    region = slice(i * REGION, (i + 1) * REGION)
    if not (got_final[:, region] == want_final[:, region]).all():
      bad.append(f"{name}: LDS words {got_final[:, region].view(np.uint32)} != pseudocode {want_final[:, region].view(np.uint32)}")
    if "_RTN" in name:
      k = word_bytes(name) // 4
      got, want = st.out[i, :lanes, :k], want_ret[i, :lanes, :k]
      if not (got == want).all():
        g = int(np.argmax((got != want).any(1)))
        bad.append(f"{name}: lane {g} returned {got[g]}, pseudocode {want[g]}")
  assert not bad, "\n".join(bad)

# *** faults: every lane is checked before any word is written ***

def fault_kernel(name:str, bad_lane:int, shift:int, ds:bool) -> bytes:
  """Lane l adds 1 at target + 4 * (l % WORDS) (global, saddr form) or LDS 4 * (l % WORDS); lane bad_lane's address
  is moved by `shift` bytes (past the allocation, or off the word's alignment)."""
  code = [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0),
          I.v_and_b32_e32(v[2], 3, v[0]), I.v_lshlrev_b32_e32(v[2], 2, v[2]), I.v_mov_b32_e32(v[3], shift),
          I.v_cmp_eq_u32_e32(bad_lane, v[0]), I.v_cndmask_b32_e32(v[3], 0, v[3]), I.v_add_nc_u32_e32(v[2], v[2], v[3]),
          I.v_mov_b32_e32(v[4], 1)]
  if ds: code.append(_atomic(name, addr=v[2], data0=v[4], offset0=0, offset1=0))
  else: code.append(I.s_load_b64(sdata=s[8:9], sbase=s[0:1], offset=16))
  if not ds: code += [I.s_waitcnt(simm16=0), _atomic(name, vdst=v[5], addr=v[2], data=v[4], saddr=s[8:9], offset=0, glc=1)]
  return b"".join(x.to_bytes() for x in code + [I.s_waitcnt(simm16=0), I.s_endpgm()])

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name,shift,ds,why", [
  ("GLOBAL_ATOMIC_ADD_U32", 1 << 30, False, "outside every allocation"),
  ("GLOBAL_ATOMIC_ADD_U32", 2, False, "global atomic at 0x{va:x} is not 4-byte aligned"),
  ("DS_ADD_U32", 4096, True, "LDS offset 0x{off:x} is outside its 512 byte allocation"),
  ("DS_ADD_U32", 2, True, "LDS atomic at 0x{off:x} is not 4-byte aligned")])
def test_atomic_faults_name_the_instruction(path, name, shift, ds, why, monkeypatch):
  """A bad address in lane 5 of every wave (the first wave faults first) is a GPUPageFault naming the instruction and
  its PC, and no lane's word has been written."""
  st = Setup([name], 3)
  st.start[:] = 0
  bad = 5
  code = fault_kernel(name, bad, shift, ds)
  with pytest.raises(GPUPageFault) as e: run_path(st, code, path, monkeypatch, lds=512 if ds else 0)
  msg = str(e.value)
  va = st.target.ctypes.data + 4 * (bad % 4) + shift
  off = 4 * (bad % 4) + shift
  assert why.format(va=va, off=off) in msg, msg
  assert f"{name.lower()} at PC 0x" in msg, msg
  assert not st.target.any(), "a faulting atomic wrote a word"

# *** the numpy path's prefix scan against its loop ***

def row_fn(row:str):
  """The numpy backend's function for an RDNA3 ATOMIC row (the one its kernels call)."""
  from mockgpu.compiler.rdna import program
  from mockgpu.compiler.rdna.backends.numpy import np_atomic
  from mockgpu.compiler.rdna.semantics import rdna3
  ns:dict = {}
  exec("from mockgpu.compiler.rdna.backends.numpy_runtime import *\n" + "\n".join(np_atomic(program.atomic(row, rdna3), "fn")), ns)
  return ns["fn"]

def associative_rows() -> list[str]:
  from mockgpu.compiler.rdna.semantics import rdna3
  return sorted(n for n in rdna3.ASSOCIATIVE if n.endswith("32"))

@settings(max_examples=60, deadline=None)
@given(keys=hs.lists(hs.integers(0, 5), min_size=1, max_size=80), seed=hs.integers(0, 2**32 - 1),
       row=hs.sampled_from(associative_rows()))
def test_prefix_scan_equals_the_serial_loop(keys, seed, row):
  """serial(associative=True) (a log-step scan) gives the same values seen, words and final values as the
  one-element-at-a-time loop for every ASSOCIATIVE row, on random conflicts."""
  from mockgpu.compiler.rdna.backends import numpy_memory as nm
  fn = row_fn(row)
  rng = np.random.default_rng(seed)
  k = np.asarray(keys, np.int64)
  cur = rng.integers(0, 2**32, 6, dtype=np.uint64).astype(np.uint32)
  cols = [rng.choice(np.asarray(SPECIAL32 + [7, 9], np.uint32), len(k))]
  got = nm.serial(k, lambda u: cur[u], cols, fn, True)
  want = nm.serial(k, lambda u: cur[u], cols, fn, False)
  for g, w in zip(got, want): assert (g == w).all(), (row, keys, got, want)
