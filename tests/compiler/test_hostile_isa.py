"""Hostile kernels (issue 13, the ISA half): each class the fuzzers found ends in a named error that names the culprit,
on both executor paths, or runs as the ISA says. The fuzzers themselves are tests/fuzz/test_fuzz_isa.py."""
from __future__ import annotations
import logging, struct
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_LO
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.errors import GPUPageFault, InvalidInstruction, Unmodelled, MockGPUError
from mockgpu.memory import outside
from mockgpu.compiler.ptx.syntax import InvalidPTX, PTXSyntaxError
import support.rdna_isa as R
import support.ptx_isa as X
from support.rdna_harness import aligned

# *** one bounds check that cannot wrap ***

def test_outside_does_not_wrap():
  room = np.uint64(4096)
  assert outside(np.array([2**64 - 4, 2**63, 4092, 4093, 0], np.uint64), 4, room).tolist() == [True, True, False, True, False]
  assert outside(np.array([2**64 - 4], np.uint64), 8, np.uint64(2**64 - 1)).tolist() == [True]   # a + 8 would wrap to 4

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("where", ["top", "bit63"])
@pytest.mark.parametrize("inst", ["global_load_b32", "global_load_b128", "s_load_b64", "global_store_b64"])
def test_rdna_address_near_2_64_faults(where, inst):
  out = aligned(4096).view(np.uint32)
  lo, hi = (0xfffffffc, 0xffffffff) if where == "top" else (out.ctypes.data & 0xffffffff, (out.ctypes.data >> 32) | 1 << 31)
  access = {"global_load_b32": I.global_load_b32(vdst=v[2], addr=v[1], saddr=s[8:9], offset=0),
            "global_load_b128": I.global_load_b128(vdst=v[2:5], addr=v[1], saddr=s[8:9], offset=0),
            "s_load_b64": I.s_load_b64(sdata=s[10:11], sbase=s[8:9], offset=0),
            "global_store_b64": I.global_store_b64(addr=v[1], data=v[2:3], saddr=s[8:9], offset=0)}[inst]
  body = [I.s_mov_b32(s[8], lo), I.s_mov_b32(s[9], hi), I.v_mov_b32_e32(v[1], 0), access, I.s_waitcnt(simm16=0), I.s_endpgm()]
  with pytest.raises(GPUPageFault, match=rf"at 0x{hi:x}{lo:08x} .*\({inst} at PC 0x") as e: R.run(R.kernel(*body), out)
  assert e.value.va == hi << 32 | lo

@pytest.mark.usefixtures("ptx_path")
@pytest.mark.parametrize("where", ["top", "bit63"])
@pytest.mark.parametrize("access", ["ld.global.u32 %r1, [%rd1];", "ld.global.v2.u32 {%r1, %r2}, [%rd1];",
                                    "st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};", "atom.global.add.u32 %r1, [%rd1], 1;"])
def test_ptx_address_near_2_64_faults(where, access):
  out = np.zeros(32, np.uint32)
  a = 2**64 - 4 if where == "top" else out.ctypes.data | 1 << 63
  # the atomic computed a + 4 in uint64 (0 for the top address), passed and ended in an IndexError
  with pytest.raises(GPUPageFault, match=rf"at 0x{a:x} is outside every allocation \(PTX line 13: {access.split()[0]}") as e:
    X.run(X.kernel(f"mov.u64 %rd1, {a};\n{access}"), [out])
  assert e.value.va == a

# *** RDNA instructions the ISA does not define ***

def _with_src0(inst, src0:int, dword:int=0) -> bytes:
  """inst's bytes with the 9-bit src0 field of its dword `dword` replaced."""
  words = list(struct.unpack(f"<{len(inst.to_bytes()) // 4}I", inst.to_bytes()))
  words[dword] = (words[dword] & ~0x1ff) | src0
  return struct.pack(f"<{len(words)}I", *words)

class Raw:
  """Raw instruction bytes in a kernel list."""
  def __init__(self, data:bytes): self.data = data
  def to_bytes(self) -> bytes: return self.data

def _invalid(raw:bytes, *why:str, named_by_bytes:bool=True):
  out = aligned(4096).view(np.uint32)
  with pytest.raises(InvalidInstruction) as e: R.run(R.kernel(R.tid_times4(), Raw(raw), I.s_endpgm()), out)
  msg = str(e.value)
  assert msg.startswith("invalid instruction: ") and "at PC 0x" in msg and "in kernel kernel@0x" in msg, msg
  assert raw.hex() in msg or not named_by_bytes, msg
  for w in why: assert w in msg, msg
  return msg

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("code", [209, 220, 232, 239, 249])
def test_rdna_reserved_operand_encoding(code):
  # tinygrad's decoder gives these a Reg whose repr raised RuntimeError('unknown register')
  _invalid(_with_src0(I.v_add_f32_e32(v[2], v[3], v[4]), code), "v_add_f32_e32", f"reserved operand encoding {code}")

@pytest.mark.usefixtures("rdna_path")
@pytest.mark.parametrize("field,shift", [("opx", 22), ("opy", 17)])
def test_rdna_reserved_vopd_opcode(field, shift):
  ops = {"opx": 8, "opy": 8, field: 14}   # v_dual_mov_b32 (8) on the other side; VOPDOp 14 does not exist
  word0 = 0b110010 << 26 | ops["opx"] << 22 | ops["opy"] << 17 | 256   # srcx0 v0
  word1 = (256 + 1) | 3 << 24   # srcy0 v1, vdsty v3
  _invalid(struct.pack("<2I", word0, word1), f"word 0x{word0:08x}", named_by_bytes=False)   # the word that does not decode

@pytest.mark.usefixtures("rdna_path")
def test_rdna_vgpr_past_v255():
  # a 64-bit source at v255 reads v256 (IndexError on the numpy path; the C path widened its register array)
  _invalid(_with_src0(I.v_add_f64(v[2:3], v[4:5], v[6:7]), 511, dword=1), "v_add_f64", "v256 is past v255")

@pytest.mark.usefixtures("rdna_path")
def test_rdna_sgpr_where_a_vgpr_is_required():
  # v_readlane_b32's src0 must be a VGPR: s0 there indexed V[-256]
  _invalid(_with_src0(I.v_readlane_b32(s[10], v[2], s[0]), 0, dword=1), "v_readlane_b32", "operand encoding 0 where a VGPR is required")

@pytest.mark.usefixtures("rdna_path")
def test_rdna_vgpr_where_an_sgpr_is_required():
  inst = I.v_cndmask_b32_e64(v[3], v[1], v[2], VCC_LO)
  w = list(struct.unpack("<2I", inst.to_bytes()))
  w[1] = (w[1] & ~(0x1ff << 18)) | (256 + 64) << 18   # the lane mask (src2) as v64: the numpy path indexed S[320]
  _invalid(struct.pack("<2I", *w), "v_cndmask_b32_e64", "v64 where the instruction needs an SGPR")

@pytest.mark.parametrize("rsrc1,what", [(R.RSRC1 | 1 << 12, "FLOAT_ROUND_MODE"), (R.RSRC1 & ~(3 << 16) | 1 << 16, "FLOAT_DENORM_MODE")])
def test_rdna_unmodelled_float_modes(rsrc1, what):
  out = aligned(4096).view(np.uint32)
  with pytest.raises(Unmodelled, match=what) as e: R.run(R.kernel(I.s_endpgm()), out, rsrc1=rsrc1)
  assert isinstance(e.value, NotImplementedError) and isinstance(e.value, MockGPUError)

def test_unknown_family_is_unmodelled():
  # the executor runs rdna3, rdna35, rdna4 (wave32/64) and cdna3, cdna4 (wave64, tests/compiler/rdna/test_cdna_exec.py); any other is named
  from mockgpu.emulators.rdna import Dispatch, run_dispatch
  from mockgpu.memory import AddressSpace
  d = Dispatch("gcn5", 0x1000, R.RSRC1, R.RSRC2, 0, [0] * 16, 0, 0, (64, 1, 1), (1, 1, 1), False)
  with pytest.raises(Unmodelled, match=r"architecture 'gcn5' is not implemented \(rdna3, rdna35, rdna4, cdna3, cdna4\)"):
    run_dispatch(AddressSpace("w64"), d)

# *** PTX the front end rejects, as ptxas does ***

def _bad_ptx(body:str, *why:str, regs:str=""):
  # the module is rejected when it loads, before any launch chooses the numpy or the C path: these tests run once
  with pytest.raises(InvalidPTX) as e: X.load_module(X.kernel(X.LOAD3 + body + "\nst.global.b32 [%rd9], %r4;", regs=regs))
  msg = str(e.value)
  first = body.split("\n")[0].rstrip(";")
  assert msg.startswith("PTX line ") and first in msg and "not valid PTX" in msg and "(in k)" in msg, msg
  for w in why: assert w in msg, msg

@pytest.mark.parametrize("body,why", [
  ("and.b32 %r4, %r1;", "and takes 3 operands, not 2"),
  ("setp.eq.s32 %p1, %r1;", "setp takes 3 or 4 operands, not 2"),
  ("mad.lo.s32 %r4, %r1, %r2;", "mad takes 4 operands, not 3"),
  ("selp.b32 %r4, %r1, %r2;", "selp takes 4 operands, not 3"),
  ("testp.finite.u32 %p1, %r1;", "testp does not take .u32"),
  ("sqrt.rn.b8 %r4, %r1;", "sqrt does not take .b8"),
  ("shl.f32 %f1, %f2, 3;", "shl does not take .f32"),
  ("not.f32 %f1, %f2;", "not does not take .f32"),
  ("add.s32 %r4, %rd1, %r2;", "%rd1 is a .b64 register where the instruction needs .s32"),
  ("add.b32 %r4, %r1, %r2;", "add does not take .b32"),
  ("mov.u32 5, %r1;", "the destination of mov must be a register"),
  ("add.u32 %r4, [%rd1], 1;", "operand 2 is an address"),
  ("cvt.rzi.b32.f32 %r4, %f1;", "cvt does not take .b32"),
])
def test_ptx_invalid_operands(body, why):
  _bad_ptx(body, why)

@pytest.mark.usefixtures("ptx_path")
@pytest.mark.parametrize("body", ["mov.b32 %f1, %r1;", "ld.global.u8 %r4, [%rd5];", "cvt.u32.u16 %r4, %h1;", "cvt.u16.u32 %h1, %r1;",
                                  "mul.wide.u32 %rd10, %r1, %r2;", "setp.ne.s16 %p1, 1, 0;", "st.global.u8 [%rd5], %r1;",
                                  "mov.b64 %rd10, {%r1, %r2};", "shr.s32 %r4, %r1, %r2;", "mad.lo.s64 %rd10, %rd1, 8, %rd2;",
                                  "add.f32 %f1, %r1, %f2;"])
def test_ptx_forms_ptxas_accepts_still_load(body):
  # a bit-size register of any type (.b32 agrees with .f32 too), a wider register for ld/st/cvt data, integers of either sign
  X.run(X.kernel(X.LOAD3 + body + "\nst.global.b32 [%rd9], %r4;"), [np.zeros(32, np.uint32)] * 4)

def map_body(size:int, load:str, op:str, store:str) -> str:
  """out[tid] = op(in0[tid]) over elements of `size` bytes: `load` reads in0's element (from [%rd5]), `op` computes,
  `store` writes out's element (at [%rd9])."""
  return (f"mov.u32 %r0, %tid.x;\nmul.wide.u32 %rd0, %r0, {size};\nld.param.u64 %rd1, [in0];\nld.param.u64 %rd4, [out];\n"
          f"add.s64 %rd5, %rd1, %rd0;\nadd.s64 %rd9, %rd4, %rd0;\n{load}, [%rd5];\n{op}\n{store}")

@pytest.mark.usefixtures("ptx_path")
def test_ptx_infinite_constant_of_another_width():
  # a 0f (float32) -inf in a .f64 max: the numpy path emitted the name 'inf' (NameError)
  a = np.array([1.5, -2.0, np.inf, -np.inf] * 8, np.float64)
  out = np.zeros(32, np.float64)
  X.run(X.kernel(map_body(8, "ld.global.f64 %fd1", "max.f64 %fd2, %fd1, 0fFF800000;", "st.global.f64 [%rd9], %fd2;")), [out, a])
  np.testing.assert_array_equal(out, a)

def test_ptx_bytes_not_utf8():
  from mockgpu.emulators.ptx import load_module
  text = X.kernel("mov.u32 %r1, 1;").encode()
  bad = text[:20] + b"\n\xff" + text[20:]
  line = bad[:21].count(b"\n") + 1
  with pytest.raises(PTXSyntaxError, match=rf"PTX line {line}: byte 0xff at offset 21 is not UTF-8 text"):
    load_module(bad)

# *** bounded C builds ***

def _hot_kernel(regs:int) -> str:
  return X.kernel("ld.param.u64 %rd1, [out];\nmov.f32 %x3, 0f3F800000;\nmov.b32 %r1, %x3;\nst.global.u32 [%rd1], %r1;",
                  regs=f".reg .f32 %x<{regs}>;\n")

def test_c_build_timeout_keeps_the_numpy_path(monkeypatch, tmp_path, caplog):
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "1")
  monkeypatch.setenv("MOCKGPU_CACHE_DIR", str(tmp_path))
  monkeypatch.setenv("MOCKGPU_CC_TIMEOUT", "0.001")
  out = np.zeros(32, np.uint32)
  with caplog.at_level(logging.WARNING, logger="mockgpu"): st = X.run(_hot_kernel(7), [out])
  assert not st.native and out[0] == 0x3F800000
  assert any("timed out after 0.001s (MOCKGPU_CC_TIMEOUT); the numpy path runs it" in r.getMessage() for r in caplog.records)

def test_declared_registers_bound_the_c_translation(monkeypatch):
  from mockgpu.compiler.ptx.backends import c as cgen
  from mockgpu.emulators.ptx import native
  monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "1")
  monkeypatch.setattr(cgen, "MAX_REGS", 64)
  out = np.zeros(32, np.uint32)
  st = X.run(_hot_kernel(1000), [out])
  assert not st.native and out[0] == 0x3F800000
  assert any("declared registers (the C translation takes at most 64)" in k for k in native.declined)

@pytest.mark.usefixtures("ptx_path")
def test_ptx_uniform_shared_address_outside_the_window():
  # a global pointer (the same for every thread: a 0-d value) used as a .shared address: _flat indexed the 0-d
  # out-of-bounds mask (IndexError) instead of faulting
  out = np.zeros(32, np.uint32)
  with pytest.raises(GPUPageFault, match=r"PTX line 13: ld.shared.u32 %r4, \[%rd1\+96\] \(shared window of 0 bytes\)"):
    X.run(X.kernel("ld.param.u64 %rd1, [out];\nld.shared.u32 %r4, [%rd1+96];\nst.global.u32 [%rd1], %r4;"), [out])

@pytest.mark.usefixtures("ptx_path")
def test_ptx_cvt_rn_to_the_same_float_type():
  # cvt.rn.f16.f16 (an opcode swap of cvt.rn.f16.f32): a float rounding to the format the value has is the value
  # (numpy path: KeyError 'rn' in round_integral; the C path declines it)
  a = np.array([1.5, -2.25, 65504.0, 0.0] * 8, np.float16)
  out = np.zeros(32, np.float16)
  X.run(X.kernel(map_body(2, "ld.global.b16 %h1", "cvt.rn.f16.f16 %h2, %h1;", "st.global.b16 [%rd9], %h2;")), [out, a])
  np.testing.assert_array_equal(out, a)
