#!/usr/bin/env python3
"""RDNA3 executor micro-benchmarks, below tinygrad's runtime: wave-instructions/s of real tinygrad gfx1100 kernels on
dispatches of 1024 waves and of one wave, run through the device-free harness of tests/compiler/rdna/test_rdna_harness.py.

  python bench/rdna_micro.py
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import numpy as np
from test_rdna_harness import compile_calls, launch, aligned, cpu, Loaded
from mockgpu.memory import AddressSpace
from mockgpu.emulators.rdna import native

def prepare(out):
  call, info, lib = [c for c in compile_calls(out) if c[1] is not None][-1]
  bufs = []
  for a in call.src[1:]:
    arr = aligned(max(a.buffer.nbytes, 4096))
    if a.buffer.is_allocated(): arr[:a.buffer.nbytes] = np.frombuffer(bytearray(a.buffer.as_memoryview()), np.uint8)
    bufs.append(arr)
  return lib, bufs, info

def bench(name:str, out, reps:int, target:float):
  lib, bufs, info = prepare(out)
  loaded, mem = Loaded(lib), AddressSpace("bench")  # one device: its address space persists across launches
  for _ in range(native.HOT_DISPATCHES): launch(lib, bufs, info.global_size, info.local_size, mem=mem, loaded=loaded)  # translate, warm caches
  insts, secs = 0, 0.0
  for _ in range(reps):
    s = launch(lib, bufs, info.global_size, info.local_size, mem=mem, loaded=loaded)
    insts, secs = insts + s.wave_instructions, secs + s.seconds
  print(f"{name:32s} {s.waves:5d} waves  {'native' if s.native else 'numpy ':6s} {insts / secs / 1e6:6.2f} M wave-instructions/s "
        f"(target {target:g} M)  {secs / reps * 1e6:8.0f} us/dispatch")

if __name__ == "__main__":
  os.environ.setdefault("MOCKGPU_RDNA_NATIVE", "1")  # the C path it measures (auto takes it once a kernel's build pays)
  r = np.random.default_rng(0)
  a, b = cpu(r.random(1 << 17, dtype=np.float32)), cpu(r.random(1 << 17, dtype=np.float32))
  bench("elementwise a*b+a, 128K floats", a * b + a, 20, 20)
  a, b = cpu(r.random((512, 512), dtype=np.float32)), cpu(r.random((512, 512), dtype=np.float32))
  bench("matmul 512", a @ b, 1, 20)
  a, b = cpu(r.random(32, dtype=np.float32)), cpu(r.random(32, dtype=np.float32))
  bench("elementwise a*b+a, one wave", a * b + a, 200, 1)
  bench("sum of 512 floats, one wave", cpu(r.random(512, dtype=np.float32)).sum(), 200, 1)
  bench("softmax of 32 floats, one wave", cpu(r.random(32, dtype=np.float32)).softmax(), 200, 1)
