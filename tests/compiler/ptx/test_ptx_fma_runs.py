"""Runs of fma.rn.f32 (and add/sub/mul.f32) on the numpy path: the backend runs a run of them raw and tests for a NaN once at its
end, on the values no other was computed from (compiler/ptx/backends/numpy.py: Ctx.flush_fma). Every register the
run wrote must end as the stepper's (each fma canonical at once) bit for bit: intermediates left live, a value
overwritten after another fma read it, an immediate operand, NaNs loaded with payloads, NaNs made by inf*0 and inf-inf."""
import numpy as np
import pytest
from mockgpu.memory import AddressSpace
from mockgpu.emulators.ptx import load_module, launch, Launch, run_stepped, translate_module
from support.ptx_isa import HEAD

# float32 words: a zero, one, a negative, infinities, NaNs with payloads (quiet, negative), a subnormal
WORDS = [0x00000000, 0x3f800000, 0xc0200000, 0x7f800000, 0xff800000, 0x7fc12345, 0xffc00000, 0x00000010]
# each launch runs one (a, b, c) in every lane: the end-of-run test is per register, so a NaN must be alone in one
# register of a launch for a missed test to show
TRIPLES = [(a, b, c) for a in WORDS for b in WORDS for c in WORDS]
N = 32
# the run, three chains on separate inputs so that a NaN can be in one alone: %f10-%f12 on a and b, its intermediates
# left live; %f13 on c, read by %f14's first value, which is overwritten (%f13 is tested itself: the only value read
# from it is gone); %f15-%f16 on a and b with an infinite immediate (inf * 0, inf - inf); %f17-%f19 the adds, subs
# and muls a run takes too (tinygrad's PTX renderer interleaves them with its fmas), on c and b
RUN = """fma.rn.f32 %f10, %f1, %f2, %f1;
fma.rn.f32 %f11, %f2, %f2, %f10;
fma.rn.f32 %f12, %f1, %f1, %f11;
fma.rn.f32 %f13, %f3, %f3, %f3;
fma.rn.f32 %f14, %f13, %f13, %f3;
fma.rn.f32 %f14, %f3, 0f3F800000, 0f3F800000;
fma.rn.f32 %f15, %f2, 0f7F800000, %f1;
fma.rn.f32 %f16, %f15, %f1, %f2;
mul.f32 %f17, %f3, 0f7F800000;
add.rn.f32 %f18, %f17, %f2;
sub.f32 %f19, %f18, %f18;"""
OUT = [f"%f{i}" for i in range(10, 20)]

def kernel_source() -> str:
  body = ["mov.u32 %r0, %tid.x;", "mul.wide.u32 %rd0, %r0, 4;", "ld.param.u64 %rd1, [a];", "ld.param.u64 %rd2, [b];",
          "ld.param.u64 %rd3, [c];", "ld.param.u64 %rd4, [out];", "add.s64 %rd5, %rd1, %rd0;", "add.s64 %rd6, %rd2, %rd0;",
          "add.s64 %rd7, %rd3, %rd0;", "add.s64 %rd9, %rd4, %rd0;", "ld.global.f32 %f1, [%rd5];", "ld.global.f32 %f2, [%rd6];",
          "ld.global.f32 %f3, [%rd7];", RUN]
  body += [f"st.global.f32 [%rd9+{i * N * 4}], {r};" for i, r in enumerate(OUT)]
  regs = ".reg .b32 %r<4>;\n.reg .f32 %f<20>;\n.reg .b64 %rd<12>;\n"
  return HEAD + ".visible .entry k(.param .u64 out, .param .u64 a, .param .u64 b, .param .u64 c)\n{\n" + regs + \
    "\n".join(body) + "\nret;\n}\n"

def run_path(path:str, triples:list[tuple]=TRIPLES) -> list[int]:
  """The output registers' words of each triple (one launch each) on the stepper or the numpy path."""
  arrays = [np.zeros(len(OUT) * N, np.uint32)] + [np.zeros(N, np.uint32) for _ in range(3)]
  mem = AddressSpace("fma-runs")
  for x in arrays: mem.map(x.ctypes.data, x.nbytes)
  k = load_module(kernel_source()).kernel("k")
  params = b"".join(int(x.ctypes.data).to_bytes(8, "little") for x in arrays)
  out = []
  for t in triples:
    for x, v in zip(arrays[1:], t): x[:] = v
    if path == "stepper": run_stepped(Launch(mem, k, (1, 1, 1), (N, 1, 1), params))
    else: assert not launch(mem, k, (1, 1, 1), (N, 1, 1), params).native
    out += [int(v) for v in arrays[0][::N]]
  return out

@pytest.fixture
def numpy_only(monkeypatch): monkeypatch.setenv("MOCKGPU_PTX_NATIVE", "0")

def test_the_run_is_deferred():
  """The translation runs the fmas raw and tests once (else this file tests the eager rendering only)."""
  src = translate_module(kernel_source())
  unmasked = src.split("case _:")[0]
  assert src.count("_fma(") == 8 and src.count("nan_in(") == 1 and "fma32_canon(" not in unmasked and "canon(" not in unmasked

def test_registers_match_the_stepper_bit_for_bit(numpy_only):
  ref, got = run_path("stepper"), run_path("numpy")
  nans = [(v & 0x7fffffff) > 0x7f800000 for v in ref]
  alone = sum(sum(nans[i:i + len(OUT)]) == 1 for i in range(0, len(nans), len(OUT)))
  assert alone, "no launch made a NaN in one register only: the case tests nothing"
  bad = [([f"{w:#x}" for w in TRIPLES[i // len(OUT)]], OUT[i % len(OUT)], hex(x), hex(y)) for i, (x, y) in enumerate(zip(got, ref)) if x != y]
  assert bad == [], bad[:8]

def test_nan_free_lanes_skip_the_canon(numpy_only):
  """With no NaN anywhere the end-of-run test passes and the registers are the raw fmas' (still the stepper's)."""
  triples = [(0x3f800000, 0x40000000, 0xbf000000), (0x3eaaaaab, 0x00000010, 0x80000000), (0x3f7fffff, 0x4b800001, 0x3f800000)]
  got = run_path("numpy", triples)
  assert got == run_path("stepper", triples) and any(got)
