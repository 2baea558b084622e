"""Fuzz surface: RDNA3 instruction words, run as a one-workgroup dispatch on the numpy path, and on the C path for
one case in 32.

Half the cases are random words (1-4 of them, after a prologue that loads the kernarg pointers, before s_endpgm); the
other half are real tinygrad kernels (tests/fuzz/corpus/rdna.json, gfx1100 code from tinygrad's LLVM renderer) with
1-3 mutations: a word replaced, bits flipped, an operand byte or field replaced, a word dropped or duplicated. A
case is plain data (kind, corpus index or words, seed, path); `python surface_rdna.py CASE...` prints a case's code.
Outcomes must be ok or a named error (InvalidInstruction, UnsupportedInstruction, GPUPageFault,
InstructionBudgetExceeded, Unmodelled, ...); an EmulatorBug is outcome internal (a bug).
"""
from __future__ import annotations
import os, random, struct
import numpy as np
from harness import corpus

NAME = "rdna"
ENV = {"MOCKGPU_BUDGET": "2000", "MOCKGPU_REPLAY_DIR": "off", "MOCKGPU_CACHE_DIR": "off", "MOCKGPU_CC_TIMEOUT": "30"}
RSRC1 = 0x3 << 16 | 0x3 << 18   # f32 and f16/f64 denormals allowed, round to nearest even
RSRC2 = 2 << 1 | 1 << 7         # two user SGPRs (the kernarg pointer), TGID_X
BUF = 1 << 14
# interesting operand encodings: VGPRs at the file's end, SGPR pairs at the edge, reserved values, literal, constants
OPERANDS = [0, 1, 104, 105, 106, 124, 125, 126, 127, 128, 192, 193, 208, 209, 232, 233, 234, 235, 239, 240, 248, 249, 250,
            251, 252, 253, 254, 255]

def _prologue() -> bytes:
  from tinygrad.renderer.amd.dsl import s, v
  from tinygrad.runtime.autogen.amd.rdna3 import ins as I
  return b"".join(i.to_bytes() for i in [I.s_load_b128(sdata=s[4:7], sbase=s[0:1], offset=0), I.s_waitcnt(simm16=0),
                                          I.v_lshlrev_b32_e32(v[1], 2, v[0])])
END = bytes.fromhex("0000b0bf")   # s_endpgm

def _mutate_words(rng:random.Random, words:list[int]) -> list[int]:
  for _ in range(rng.choice([1, 1, 2, 3])):
    if not words: break
    i = rng.randrange(len(words))
    kind = rng.randrange(6)
    if kind == 0: words[i] = rng.getrandbits(32)
    elif kind == 1: words[i] ^= 1 << rng.randrange(32)
    elif kind == 2: words[i] = (words[i] & ~(0xff << 8 * (k := rng.randrange(4)))) | rng.choice(OPERANDS) << 8 * k
    elif kind == 3: words[i] = (words[i] & ~0x1ff) | (rng.choice(OPERANDS) | rng.randrange(2) << 8)   # a 9-bit src0
    elif kind == 4: del words[i]
    else: words.insert(i, words[i])
  return words

def code(case) -> tuple[bytes, int, int]:
  """The code bytes of a case and the RSRC1/RSRC2 it runs with."""
  kind, idx, seed, _ = case
  rng = random.Random(seed)
  if kind == "words":
    return _prologue() + b"".join(struct.pack("<I", rng.getrandbits(32)) for _ in range(idx)) + END, RSRC1, RSRC2
  c = corpus("rdna")[idx]
  raw = bytes.fromhex(c["code"])
  words = _mutate_words(rng, list(struct.unpack(f"<{len(raw) // 4}I", raw)))
  return struct.pack(f"<{len(words)}I", *words) + END, c["rsrc1"], c["rsrc2"]

def generate(rng:random.Random, n:int) -> list:
  out = []
  for _ in range(n):
    path = "native" if rng.randrange(32) == 0 else "numpy"   # a C build costs ~0.3 s: the numpy path is 20x cheaper
    if rng.randrange(2): out.append(("words", rng.randint(1, 4), rng.getrandbits(32), path))
    else: out.append(("kernel", rng.randrange(len(corpus("rdna"))), rng.getrandbits(32), path))
  return out

# *** running ***

def setup():
  global AddressSpace, Dispatch, run_dispatch
  from mockgpu.memory import AddressSpace
  from mockgpu.emulators.rdna import Dispatch, run_dispatch

def _aligned(nbytes:int, align:int=4096) -> np.ndarray:
  raw = np.zeros(nbytes + align, np.uint8)
  off = (-raw.ctypes.data) % align
  return raw[off:off + nbytes]

def dispatch(text:bytes, rsrc1:int, rsrc2:int, path:str, nbufs:int=4):
  """Run code on one 32-lane workgroup with nbufs 16 KiB buffers as its kernel arguments (s[0:1] -> the kernarg)."""
  os.environ["MOCKGPU_RDNA_NATIVE"] = "1" if path == "native" else "0"
  mem = AddressSpace("fuzz")
  img, args = _aligned(8192), _aligned(256, 256)
  img[:len(text)] = np.frombuffer(text, np.uint8)
  bufs = [_aligned(BUF) for _ in range(nbufs)]
  struct.pack_into(f"<{nbufs}Q", args, 0, *(b.ctypes.data for b in bufs))
  for a in (img, args, *bufs): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  d = Dispatch("rdna3", img.ctypes.data, rsrc1, rsrc2, 0, user, 0, 0, (32, 1, 1), (1, 1, 1), True)
  run_dispatch(mem, d)  # an EmulatorBug goes up: the harness counts it as internal
  return bufs

def execute(case):
  text, rsrc1, rsrc2 = code(case)
  dispatch(text, rsrc1, rsrc2, case[3])

def known_good() -> bool:
  """out[i] = 3 * i + 7 over 32 lanes, on both paths."""
  from tinygrad.renderer.amd.dsl import s, v
  from tinygrad.runtime.autogen.amd.rdna3 import ins as I
  body = [I.v_mul_u32_u24_e32(v[2], 3, v[0]), I.v_add_nc_u32_e32(v[2], 7, v[2]),
          I.global_store_b32(addr=v[1], data=v[2], saddr=s[4:5], offset=0), I.s_endpgm()]
  text = _prologue() + b"".join(i.to_bytes() for i in body)
  for path in ("numpy", "native"):
    out = dispatch(text, RSRC1, RSRC2, path)[0].view(np.uint32)
    if not (out[:32] == np.arange(32) * 3 + 7).all(): return False
  return True

if __name__ == "__main__":
  import ast, sys
  for arg in sys.argv[1:]: print(code(ast.literal_eval(arg))[0].hex())
