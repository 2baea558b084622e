"""PTX text shared by the native-path tests (a CTA barrier kernel).
(Moved from tests/compiler/ptx/test_ptx_native.py so that no test file imports another.)"""
from __future__ import annotations
from support.ptx_isa import kernel
BARRIER = kernel("""
mov.u32 %r0, %tid.x;
ld.param.u64 %rd4, [out];
mul.wide.u32 %rd0, %r0, 4;
add.s64 %rd9, %rd4, %rd0;
mov.u32 %r1, buf;
shl.b32 %r2, %r0, 2;
add.u32 %r3, %r1, %r2;
setp.ge.u32 %p1, %r0, 48;
@%p1 bra DONE;
mul.lo.u32 %r5, %r0, %r0;
st.shared.u32 [%r3], %r5;
bar.sync 0;
sub.u32 %r6, 47, %r0;
shl.b32 %r6, %r6, 2;
add.u32 %r6, %r1, %r6;
ld.shared.u32 %r4, [%r6];
add.u32 %r4, %r4, %r5;
st.global.u32 [%rd9], %r4;
DONE:
""", regs=".shared .align 4 .b32 buf[64];\n")
