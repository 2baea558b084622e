"""The names translated kernels see (their module does `from mockgpu.compiler.ptx.backends.numpy_names import *`)."""
from mockgpu.compiler.ptx.layout import SHARED_WINDOW, LOCAL_WINDOW, CONST_WINDOW  # noqa: F401
from mockgpu.compiler.ptx.backends.numpy_runtime import put, resize, uniformity, KernelTrap  # noqa: F401
from mockgpu.compiler.ptx.backends.numerics import (farith, fma32, fma32_canon, fma32_raw, nan_in, canon_each,  # noqa: F401
                                            approx, ftz, sat, fmin, fmax, to64, from64, float_to_int, int_to_float, float_to_float,
                                            round_integral, canon, fp8x2_from_f32, fp8x2_from_f16x2, fp8x2_to_f16x2)
from mockgpu.compiler.ptx.backends.bitops import (idiv, irem, mulhi64, sext24, int_to_int, prmt, bfe, bfi, brev, clz, bfind,  # noqa: F401
                                          half_of, join_halves, relu, satfinite, shl, shr)
