"""Fuzz surface: mutated PTX of real tinygrad kernels (tests/fuzz/corpus/ptx.json: tinygrad's PTX renderer and NVRTC),
parsed, translated and run on a one-CTA grid on the numpy path, and on the C path for one case in 16.

A mutation is one of: an opcode swapped for another, a type modifier swapped, a modifier added, an operand dropped,
duplicated or replaced (a register of another type or size, an immediate, a float literal), a line dropped, duplicated
or moved, a register declaration resized, or the text turned into bytes that are not UTF-8. A case is (corpus index,
seed, path): `python surface_ptx.py CASE...` prints the mutated text of cases as a report prints them.
Outcomes must be ok or a named error (InvalidPTX, UnsupportedInstruction, GPUPageFault, InstructionBudgetExceeded, ...);
an EmulatorBug is outcome internal: a bug in mockgpu.
"""
from __future__ import annotations
import os, random, re
import numpy as np
from harness import corpus
from support.ptx_good import GOOD_PTX as GOOD  # harness put tests/ on the path

NAME = "ptx"
ENV = {"MOCKGPU_BUDGET": "2000", "MOCKGPU_REPLAY_DIR": "off", "MOCKGPU_CACHE_DIR": "off", "MOCKGPU_CC_TIMEOUT": "30"}
BLOCK = (8, 1, 1)
BUF = 1 << 14   # bytes behind every pointer parameter: tinygrad's corpus kernels index at most a few KiB

OPCODES = ["add", "sub", "mul.lo", "mul.wide", "mul.hi", "mad.lo", "div", "rem", "and", "or", "xor", "not", "shl", "shr", "min",
           "max", "neg", "abs", "mov", "setp.eq", "setp.lt", "setp.ne", "selp", "cvt.rn", "cvt.rzi", "sqrt.rn", "sqrt.approx",
           "rcp.approx", "ex2.approx", "lg2.approx", "sin.approx", "fma.rn", "testp.finite", "testp.nan", "popc", "clz", "brev",
           "bfe", "bfi", "prmt", "ld.global", "st.global", "ld.shared", "ld.param", "cvta.to.global", "atom.global.add", "bar.sync",
           "copysign", "set.eq", "slct", "lop3", "shf.l.wrap", "mul24.lo", "bfind", "cnot", "tanh.approx", "rsqrt.approx"]
TYPES = ["b8", "u8", "s8", "b16", "u16", "s16", "f16", "bf16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64", "pred",
         "f16x2", "b128", "v2", "v4"]
MODS = ["rn", "rz", "sat", "ftz", "approx", "wide", "hi", "lo", "cc", "v2", "v4", "shared", "local", "const", "uni", "full", "relu"]
OPERANDS = ["%r1", "%rd1", "%f1", "%fd1", "%p1", "%rs1", "%h1", "0", "1", "-1", "0fFF800000", "0f7FC00000", "0d7FF0000000000000",
            "0x80000000", "4294967296", "1.5", "[%rd1]", "[%rd1+4]", "%tid.x", "%ctaid.y", "_", "{%r1, %r2}", "%nosuch", "$L__BB0_1"]

# *** mutations ***

def _body_lines(lines:list[str]) -> list[int]:
  """Indexes of the instruction lines (inside the entry, not declarations or labels)."""
  return [i for i, ln in enumerate(lines) if ln.strip().endswith(";") and not ln.strip().startswith((".", "}", "{", "//"))
          and not re.match(r"^\s*\.(reg|param|shared|local)", ln)]

def _swap_opcode(rng, ln:str) -> str:
  m = re.match(r"^(\s*(?:@!?%\w+\s+)?)([a-z][\w.]*)(.*)$", ln)
  if not m: return ln
  mods = [x for x in m.group(2).split(".")[1:] if x in TYPES]
  return m.group(1) + rng.choice(OPCODES) + "".join("." + t for t in mods) + m.group(3)

def _swap_type(rng, ln:str) -> str:
  found = [mt for mt in re.finditer(r"\.(" + "|".join(TYPES) + r")\b", ln)]
  if not found: return ln
  mt = rng.choice(found)
  return ln[:mt.start()] + "." + rng.choice(TYPES) + ln[mt.end():]

def _add_mod(rng, ln:str) -> str:
  m = re.match(r"^(\s*(?:@!?%\w+\s+)?[a-z]\w*)(.*)$", ln)
  return m.group(1) + "." + rng.choice(MODS) + m.group(2) if m else ln

def _operands(ln:str):
  m = re.match(r"^(\s*(?:@!?%\w+\s+)?[a-z][\w.]*\s+)(.*);\s*$", ln)
  if not m: return None
  from mockgpu.compiler.ptx.parser import split_top
  return m.group(1), split_top(m.group(2))

def _mutate_operand(rng, ln:str) -> str:
  parts = _operands(ln)
  if parts is None or not parts[1]: return ln
  head, ops = parts
  k = rng.randrange(len(ops))
  what = rng.randrange(3)
  if what == 0 and len(ops) > 1: del ops[k]
  elif what == 1: ops.insert(k, ops[k])
  else: ops[k] = rng.choice(OPERANDS)
  return head + ", ".join(ops) + ";"

def _lines_op(rng, lines:list[str], body:list[int]) -> list[str]:
  i, j = rng.choice(body), rng.choice(body)
  what = rng.randrange(3)
  if what == 0: return lines[:i] + lines[i + 1:]
  if what == 1: return lines[:i] + [lines[i]] + lines[i:]
  out = list(lines)
  out[i], out[j] = out[j], out[i]
  return out

def _resize_reg(rng, lines:list[str]) -> list[str]:
  decls = [i for i, ln in enumerate(lines) if re.search(r"\.reg\s+\.\w+\s+%\w+<\d+>", ln)]
  if not decls: return lines
  i = rng.choice(decls)
  out = list(lines)
  out[i] = re.sub(r"<\d+>", f"<{rng.choice([0, 1, 2, 300])}>", out[i])
  return out

def mutate(case) -> str|bytes:
  """The mutated program text of a case (bytes when the mutation makes it not UTF-8)."""
  idx, seed, _ = case
  rng = random.Random(seed)
  lines = corpus("ptx")[idx]["ptx"].split("\n")
  for _ in range(rng.choice([1, 1, 1, 2, 3])):
    body = _body_lines(lines)
    if not body: break
    kind = rng.randrange(16)
    if kind == 15: return "\n".join(lines).encode() + bytes([0xff, 0xfe, rng.randrange(0x80, 0x100)])
    if kind == 14: lines = _resize_reg(rng, lines); continue
    if kind >= 12: lines = _lines_op(rng, lines, body); continue
    i = rng.choice(body)
    fn = (_swap_opcode, _swap_type, _add_mod, _mutate_operand)[kind % 4]
    lines[i] = fn(rng, lines[i])
  return "\n".join(lines)

def generate(rng:random.Random, n:int) -> list:
  return [(rng.randrange(len(corpus("ptx"))), rng.getrandbits(32), "native" if rng.randrange(16) == 0 else "numpy") for _ in range(n)]

# *** running ***

def setup():
  global AddressSpace, load_module, launch
  from mockgpu.memory import AddressSpace
  from mockgpu.emulators.ptx import load_module, launch

def _buffers(mem, n:int) -> list[np.ndarray]:
  bufs = [np.zeros(BUF // 4, np.float32) + np.float32(i + 1) for i in range(n)]
  for b in bufs: mem.map(b.ctypes.data, b.nbytes)
  return bufs

def _launch(text, entry:str, nparams:int, path:str) -> list[np.ndarray]:
  os.environ["MOCKGPU_PTX_NATIVE"] = "1" if path == "native" else "0"
  mod = load_module(text)
  try: k = mod.kernel(entry)
  except KeyError: return []   # the mutation broke the entry's header: the module has no such kernel (CUDA_ERROR_NOT_FOUND)
  mem = AddressSpace("fuzz")
  bufs = _buffers(mem, sum(1 for p in k.params if p[1] == 8))
  params, ptrs = bytearray(k.param_size), iter(bufs)
  for name, size, align, off in k.params:
    v = next(ptrs).ctypes.data if size == 8 else 4
    params[off:off + size] = (v % (1 << 8 * size)).to_bytes(size, "little")
  launch(mem, k, (1, 1, 1), BLOCK, bytes(params))  # an EmulatorBug goes up: the harness counts it as internal
  return bufs

def execute(case):
  c = corpus("ptx")[case[0]]
  _launch(mutate(case), c["entry"], c["nparams"], case[2])

def known_good() -> bool:
  for path in ("numpy", "native"):
    os.environ["MOCKGPU_PTX_NATIVE"] = "1" if path == "native" else "0"
    mem, out = AddressSpace("good"), np.zeros(32, np.uint32)
    mem.map(out.ctypes.data, out.nbytes)
    launch(mem, load_module(GOOD).kernel("good"), (1, 1, 1), (32, 1, 1), out.ctypes.data.to_bytes(8, "little"))
    if not (out == np.arange(32) * 3 + 7).all(): return False
  return True

if __name__ == "__main__":
  import ast, sys
  for arg in sys.argv[1:]:
    t = mutate(ast.literal_eval(arg))
    print(t if isinstance(t, str) else t.decode(errors="replace"))
