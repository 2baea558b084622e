"""The known-good PTX kernel the hostile and fuzz tests launch after each refusal: thread i writes 3 * i + 7 to out[i]."""
GOOD_PTX = """.version 8.0
.target sm_89
.address_size 64
.visible .entry good(.param .u64 out)
{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
mov.u32 %r1, %tid.x;
mul.lo.s32 %r2, %r1, 3;
add.s32 %r2, %r2, 7;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r2;
ret;
}
"""
