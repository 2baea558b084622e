"""tinygrad's gfx1100 kernels (AMDLLVMRenderer, AMDLLVMCompiler) loaded as AMDProgram loads them and run on the
RDNA executor without a device model; DEV=CPU of the same expression is the reference.
(Moved from tests/compiler/rdna/test_rdna_harness.py so that no test file imports another.)"""
from __future__ import annotations
import ctypes, struct
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Target, round_up
from tinygrad.uop.ops import Ops
from tinygrad.codegen import to_program
from tinygrad.renderer.llvmir import AMDLLVMRenderer
from tinygrad.runtime.support.elf import elf_loader
from tinygrad.runtime.autogen import amdgpu_kd, hsa
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import Dispatch, run_dispatch
_renderer = None
def renderer() -> AMDLLVMRenderer:
  global _renderer
  if _renderer is None: _renderer = AMDLLVMRenderer(Target("AMD", "LLVM", "gfx1100"))
  return _renderer

def aligned(nbytes:int, align:int=4096) -> np.ndarray:
  raw = np.zeros(nbytes + align, np.uint8)
  off = (-raw.ctypes.data) % align
  return raw[off:off + nbytes]

class Loaded:
  """A code object placed in host memory the way AMDProgram places it on the GPU."""
  def __init__(self, lib:bytes):
    image, sections, relocs = elf_loader(lib)
    rodata = next(sh.header.sh_addr for sh in sections if sh.name == ".rodata")
    for off, sym, typ, addend in relocs:
      assert typ == 5, f"unknown AMD reloc {typ}"
      image[off:off+8] = struct.pack('<q', sym - off + addend)
    self.image = aligned(round_up(image.nbytes, 0x1000))
    self.image[:image.nbytes] = np.frombuffer(bytes(image), np.uint8)
    base = self.image.ctypes.data
    kd_t = amdgpu_kd.llvm_amdhsa_kernel_descriptor_t
    desc = kd_t.from_buffer_copy(bytes(image[rodata:rodata + ctypes.sizeof(kd_t)]))
    self.group_segment_size, self.private_segment_size = desc.group_segment_fixed_size, desc.private_segment_fixed_size
    self.kernarg_size = desc.kernarg_size
    lds = ((self.group_segment_size + 511) // 512) & 0x1ff
    self.rsrc1 = desc.compute_pgm_rsrc1 | (1 << 20)
    self.rsrc2 = desc.compute_pgm_rsrc2 | (lds << 15)
    self.rsrc3 = desc.compute_pgm_rsrc3
    self.prog_addr = base + rodata + desc.kernel_code_entry_byte_offset
    self.wave32 = desc.kernel_code_properties & 0x400 == 0x400
    self.dispatch_ptr = desc.kernel_code_properties & hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_PTR
    self.private_sgpr = desc.kernel_code_properties & hsa.AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER

def launch(lib:bytes, bufs:list[np.ndarray], global_size, local_size, vals=(), mem:AddressSpace|None=None, loaded:Loaded|None=None):
  """Map the code, kernargs and buffers and run one dispatch, as AMDComputeQueue.exec programs it."""
  prg = loaded or Loaded(lib)
  mem = mem or AddressSpace("test")
  # the code, kernarg and scratch memory belong to the Loaded program, so relaunching it on the same address space
  # (as a device relaunches a kernel) maps nothing new
  if not hasattr(prg, "kernargs"):
    prg.kernargs, prg.scratch = aligned(round_up(max(prg.kernarg_size, 16) + 64, 256), 256), aligned(1 << 16)
  kernargs, scratch = prg.kernargs, prg.scratch
  for b in [prg.image, kernargs, scratch, *bufs]:
    if not mem.is_mapped(b.ctypes.data, max(b.nbytes, 1)): mem.map(b.ctypes.data, max(b.nbytes, 1))
  args = [b.ctypes.data for b in bufs]
  struct.pack_into(f"<{len(args)}Q{len(vals)}i", kernargs, 0, *args, *vals)
  user = []
  if prg.private_sgpr: user += [scratch.ctypes.data & 0xffffffff, (scratch.ctypes.data >> 32) | 1 << 31, 0xffffffff, 0x20c14000]
  assert not prg.dispatch_ptr, "the harness does not build an HSA dispatch packet"
  user += [kernargs.ctypes.data & 0xffffffff, kernargs.ctypes.data >> 32]
  per_thread = round_up(max(prg.private_segment_size, 128), 4)
  tmpring = -(-(64 * per_thread) // 256) << 12
  d = Dispatch("rdna3", prg.prog_addr, prg.rsrc1, prg.rsrc2, prg.rsrc3, user + [0] * (16 - len(user)), tmpring,
               scratch.ctypes.data, tuple(local_size), tuple(global_size), prg.wave32)
  return run_dispatch(mem, d)

def compile_calls(out:Tensor):
  """The schedule of `out` on CPU buffers, each kernel compiled for gfx1100: [(call, ProgramInfo, lib)]."""
  calls = []
  for call in out.schedule_linear().src:
    ast = call.src[0]
    if ast.op is Ops.COPY:
      calls.append((call, None, None))
      continue
    assert ast.op is Ops.SINK, f"the harness only runs kernels and copies, not {ast.op}"
    p = to_program(ast, renderer())
    lib = next(s.arg for s in p.src if s.op is Ops.BINARY)
    calls.append((call, p.arg, lib))
  return calls

def _host_bytes(buf_uop) -> np.ndarray:
  b = buf_uop.buffer
  if b.is_allocated(): return np.frombuffer(bytearray(b.as_memoryview()), np.uint8).copy()
  return np.zeros(b.nbytes, np.uint8)

def run_mock(out:Tensor) -> tuple[np.ndarray, list]:
  """Run `out`'s kernels on the executor; returns its value and each dispatch's stats."""
  host:dict = {}
  stats = []
  last = None
  for call, info, lib in compile_calls(out):
    args = []
    for a in call.src[1:]:
      if a not in host:
        data = _host_bytes(a)
        arr = aligned(round_up(max(data.nbytes, 4), 0x1000))  # the runtime's allocations are whole pages
        arr[:data.nbytes] = data
        host[a] = arr
      args.append(host[a])
    if info is None:  # a COPY between buffers: dst, src
      args[0][:] = args[1][:args[0].nbytes]
      continue
    assert not info.vars, "the harness passes no variables"
    stats.append(launch(lib, args, info.global_size, info.local_size))
    last = (call, info)
  call, info = last
  dt = out.dtype
  res = host[call.src[1 + info.outs[0]]]
  return res[:out.numel() * dt.itemsize].view(np.dtype(dt.fmt) if dt != dtypes.bfloat16 else np.uint16).reshape(out.shape), stats

def cpu(x:np.ndarray, dtype=None) -> Tensor:
  return Tensor(x, device="CPU", dtype=dtype).realize()

def check(fn, *inputs:np.ndarray, dtypes_=None, atol=0.0, rtol=0.0):
  """fn over CPU tensors of `inputs`: the executor's result must match the CPU device's."""
  ts = lambda: [cpu(x, None if dtypes_ is None else dtypes_[i]) for i, x in enumerate(inputs)]
  ref = fn(*ts()).numpy()
  got, stats = run_mock(fn(*ts()))
  if got.dtype == np.uint16 and ref.dtype != np.uint16: got = (got.astype(np.uint32) << 16).view(np.float32)
  np.testing.assert_allclose(got.astype(ref.dtype), ref, atol=atol, rtol=rtol)
  return stats
