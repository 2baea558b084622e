"""The numpy translation's generated code (compiler/rdna/backends/numpy.py) must not shadow the runtime helpers it calls.

Its block functions were once named b<k> / a<k>: block 16 was `b16`, the name of runtime.b16 (the 16-bit operand
view), so in any kernel of 17 blocks or more every 16-bit operand read called block 16 instead: IndexError ("index
4294967168 is out of bounds for axis 0 with size 21": the operand's bits used as wave indices) or TypeError
("object of type 'numpy.uint32' has no len()") from tinygrad's cummax/cummin of 8/16-bit ints, padded any/all,
avg_pool2d and conv_transpose2d backward.

Checked two ways: statically, no name the generated code binds (its functions and every local of every function)
is a runtime/memops helper, over kernels that use every operand kind; and by running kernels of many blocks whose late
blocks read and write 16-bit halves (lo/hi, f16 and u16), on both paths, per wave divergent so that both the group
(_blk) and the whole-chunk (_all) form of each block run. Also here: VCC_HI as a compare's destination SGPR (wave32
LLVM allocates it like any SGPR; it was refused as a 'wave64 mask half')."""
from __future__ import annotations
import ast
import numpy as np
import pytest
from tinygrad.renderer.amd.dsl import s, v, VCC_HI
from tinygrad.runtime.autogen.amd.rdna3 import ins as I
from mockgpu.compiler.rdna import decode
from mockgpu.compiler.rdna.backends.numpy import Translator, split_subset
from mockgpu.compiler.rdna.backends.numpy_control import LazyBlocks
from mockgpu.compiler.rdna.backends import numpy_runtime as runtime, numpy_memory as memops
from support.rdna_harness import aligned
from support.rdna_isa import kernel, run

HELPERS = {n for mod in (runtime, memops) for n in dir(mod) if not n.startswith("__")}

def many_blocks(nblocks:int) -> list:
  """Per workgroup g (one wave): nblocks/2 steps k, each skipping a 16-bit update when k % 3 == g & 3 (a per-wave
  branch, so waves diverge and regroup); v2 counts the updates in its low half (u16), v3 adds 1.0 in its high half
  (f16 via op_sel), and each lane's result is stored."""
  body = [I.v_lshlrev_b32_e32(v[1], 3, v[0]), I.s_lshl_b32(s[16], s[2], 8), I.s_add_u32(s[4], s[4], s[16]),
          I.s_addc_u32(s[5], s[5], 0), I.v_mov_b32_e32(v[2], 0x70000), I.v_mov_b32_e32(v[3], 0x1234),
          I.s_and_b32(s[17], s[2], 3)]
  for k in range(nblocks // 2):
    body += [I.s_cmp_eq_u32(s[17], k % 3), I.s_cbranch_scc1(simm16=4),     # skips the next two 8-byte instructions
             I.v_add_nc_u16(v[2], v[2], 1), I.v_add_f16_e64(v[3], v[3], 1.0, opsel=0b1001)]
  body += [I.global_store_b64(addr=v[1], data=v[2:3], saddr=s[4:5], offset=0), I.s_endpgm()]
  return kernel(*body)

def bound_names(src:str) -> set[str]:
  """Every name the generated module binds: module globals other than its imports, and each function's locals."""
  tree, out = ast.parse(src), set()
  for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.Lambda)):
      if isinstance(node, ast.FunctionDef): out.add(node.name)
      args = node.args
      out |= {a.arg for a in args.args + args.kwonlyargs}
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store): out.add(node.id)
  return out

def translate(insts) -> str:
  code = b"".join(i.to_bytes() for i in insts)
  return Translator(decode.blocks(decode.walk(code, "rdna3")), False, False, "rdna3", 32).source()

@pytest.mark.parametrize("nblocks", [4, 40, 300])
def test_generated_names_shadow_no_helper(nblocks):
  src = translate(many_blocks(nblocks))
  assert src.count("def _blk") == src.count("def _all") >= nblocks
  shadowed = sorted(bound_names(src) & HELPERS)
  assert not shadowed, f"generated code binds runtime helper names: {shadowed}"

def test_generated_names_shadow_no_helper_every_operand_kind():
  """A kernel mixing SALU, VALU (16/32/64-bit, VOP3 modifiers, VOPD, DPP), compares into SGPRs, LDS and global memory."""
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.s_mov_b32(s[8], 0x1234), I.s_bitset1_b32(s[8], 3), I.s_bfe_u32(s[9], s[8], 0x40004),
          I.v_add_nc_u16(v[2], v[0], 5), I.v_cvt_f16_f32_e32(v[3], v[0]), I.v_fma_f32(v[4], v[0], 2.0, s[8]),
          I.v_cmp_lt_u32_e64(VCC_HI, v[0], 7), I.v_cndmask_b32_e64(v[5], 0, 1, VCC_HI), I.v_add_f64(v[6:7], v[6:7], 1.0),
          I.ds_store_b32(addr=v[1], data0=v[2]), I.ds_load_b32(vdst=v[8], addr=v[1]),
          I.global_store_b32(addr=v[1], data=v[5], saddr=s[4:5], offset=0), I.s_endpgm()]
  shadowed = sorted(bound_names(translate(kernel(*body))) & HELPERS)
  assert not shadowed, f"generated code binds runtime helper names: {shadowed}"

@pytest.mark.parametrize("nblocks", [16, 40])
@pytest.mark.parametrize("path", ["numpy", "native"])
def test_many_blocks_with_16bit_operands(path, nblocks, monkeypatch):
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  ngroups = 6
  out = aligned(8 * 32 * ngroups, 256).view(np.uint32).reshape(ngroups, 32, 2)
  stats, _ = run(many_blocks(nblocks), out, grid=(ngroups, 1, 1))
  assert stats.native == (path == "native")
  for g in range(ngroups):
    steps = sum(1 for k in range(nblocks // 2) if k % 3 != g & 3)
    np.testing.assert_array_equal(out[g, :, 0], np.full(32, 0x70000 | steps, np.uint32), err_msg=f"wave {g}: v2")
    # v3: low half untouched, high half = f16(0) + 1.0 per step (exact small integers)
    want_hi = np.float16(steps).view(np.uint16)
    np.testing.assert_array_equal(out[g, :, 1], np.full(32, (int(want_hi) << 16) | 0x1234, np.uint32), err_msg=f"wave {g}: v3")

@pytest.mark.parametrize("path", ["numpy", "native"])
def test_compare_into_vcc_hi(path, monkeypatch):
  """wave32: v_cmp_*_e64 vcc_hi, ... and v_cndmask_b32_e64 ..., vcc_hi read and write s107 as an ordinary SGPR."""
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0" if path == "numpy" else "1")
  out = aligned(4 * 32, 256).view(np.uint32)
  body = [I.v_lshlrev_b32_e32(v[1], 2, v[0]), I.v_mov_b32_e32(v[2], 0), I.v_mov_b32_e32(v[3], 0x40080000),
          I.v_cmp_lt_u32_e64(VCC_HI, v[0], 11), I.v_cndmask_b32_e64(v[4], 0, 1, VCC_HI),
          I.v_cvt_f64_u32_e32(v[2:3], v[0]), I.v_cmp_eq_f64_e64(VCC_HI, v[2:3], 4.0),
          I.v_cndmask_b32_e64(v[5], 0, 2, VCC_HI), I.v_or_b32_e32(v[4], v[4], v[5]),
          I.s_mov_b32(s[20], VCC_HI), I.v_mov_b32_e32(v[6], s[20]), I.v_and_b32_e32(v[6], 0x10, v[6]),  # bit 4 of the mask
          I.v_or_b32_e32(v[4], v[4], v[6]), I.global_store_b32(addr=v[1], data=v[4], saddr=s[4:5], offset=0), I.s_endpgm()]
  stats, _ = run(kernel(*body), out)
  assert stats.native == (path == "native")
  lane = np.arange(32)
  np.testing.assert_array_equal(out, (lane < 11) * 1 | (lane == 4) * 2 | 0x10)

def test_subset_blocks_compiled_later_keep_their_lines():
  """The subset (_blk) blocks are compiled at a kernel's first divergence from a string (split_subset): each function
  must start on the line it has in the whole source, which the error report maps back to an instruction."""
  src = translate(many_blocks(8))
  g:dict = {}
  exec(compile(split_subset(src), "<mockgpu test>", "exec"), g)
  assert "def _blk" not in split_subset(src).split("SUBSET_SOURCE")[0] and "build_subset" not in g
  lines = src.splitlines()
  blocks = LazyBlocks(None, g)
  with pytest.raises(AttributeError): blocks[0]  # binding them reads st.S: compiled first, then bound
  for k in range(len(g["BLOCK_PC"])):
    fn = g["build_subset"].__code__.co_consts
    code = next(c for c in fn if getattr(c, "co_name", None) == f"_blk{k}")
    assert lines[code.co_firstlineno - 1] == f"  def _blk{k}(w, n):"
    assert code.co_filename == "<mockgpu test>"
