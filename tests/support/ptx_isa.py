"""Hand-written PTX kernels: a header, the kernarg loads (LOAD3) and a launch on the PTX executor.
(Moved from tests/compiler/ptx/test_ptx_isa.py so that no test file imports another.)"""
import numpy as np
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch
HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"

def kernel(body:str, params:str=".param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2", regs:str="", prelude:str="") -> str:
  return HEAD + prelude + f".visible .entry k({params})\n{{\n" + \
    ".reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<24>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .f64 %fd<8>;\n" + regs + body + "\nret;\n}\n"

# loads of in0/in1/in2[tid] (32-bit) into %r1/%r2/%r3 and the address of out[tid] into %rd9
LOAD3 = """
mov.u32 %r0, %tid.x;
mov.u32 %r20, %ctaid.x;
mov.u32 %r21, %ntid.x;
mad.lo.s32 %r0, %r20, %r21, %r0;
mul.wide.u32 %rd0, %r0, 4;
ld.param.u64 %rd1, [in0];
ld.param.u64 %rd2, [in1];
ld.param.u64 %rd3, [in2];
ld.param.u64 %rd4, [out];
add.s64 %rd5, %rd1, %rd0;
add.s64 %rd6, %rd2, %rd0;
add.s64 %rd7, %rd3, %rd0;
add.s64 %rd9, %rd4, %rd0;
ld.global.b32 %r1, [%rd5];
ld.global.b32 %r2, [%rd6];
ld.global.b32 %r3, [%rd7];
"""

def run(src:str, arrays:list[np.ndarray], grid=(1, 1, 1), block=(32, 1, 1), scalars:bytes=b"", name="k", dynamic_shared=0):
  """Map the arrays (host == va), pass their addresses (then `scalars`) as the parameters, launch."""
  mem = AddressSpace("isa")
  for a in arrays:
    if not mem.is_mapped(a.ctypes.data, a.nbytes): mem.map(a.ctypes.data, a.nbytes)
  k = load_module(src).kernel(name)
  params = b"".join(int(a.ctypes.data).to_bytes(8, "little") for a in arrays) + scalars
  return launch(mem, k, grid, block, params.ljust(k.param_size, b"\0"), dynamic_shared)
