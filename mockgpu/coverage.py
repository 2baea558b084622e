"""Instruction coverage of a run: which instructions the kernels contained, on which path (numpy or C) they ran, which
the executors do not implement and which keep a kernel off the C path. `MOCKGPU_COVERAGE=FILE` records; `mockgpu
coverage FILE` reports (report()).

The executors report on the event bus (events.notify): `kernel_ran` per RDNA dispatch or PTX launch, `kernel_rejected`
when a PTX module does not translate; listen() (called when system.py is imported) hands them to rdna_dispatch,
ptx_launch and ptx_rejected. They cost one setting lookup unless MOCKGPU_COVERAGE names a file. A kernel is
classified once per process (RDNA: once per machine, through the translation cache), not per executed instruction: its
instructions are decoded (RDNA) or parsed (PTX), and each RDNA instruction is translated on its own by the numpy and
by the C translator, so every unimplemented one is named, not only the first of its block. What C refuses is the
translator's verdict whether or not the kernel got hot enough to try it. One JSON line is appended per (kernel, path) the first time a process runs a
kernel that way: a process ended by os._exit (a pytest-xdist worker the plugin ends) loses nothing, and any number of
processes (xdist workers, tinygrad's workers, the op runners) append to one file, each line in one write to a file
opened O_APPEND.

A record: {"isa": "rdna3" | "ptx", "kernel": a hash of the code, "path": "numpy" | "C", "ops": [instruction names],
"unsupported": {name: why} (the executor raises UnsupportedInstruction if the instruction runs), "invalid": {name: why}
(not an instruction of the ISA: InvalidInstruction), "numpy_only": {name: why} (the C translation does not cover it,
so its kernel runs on numpy), "declined": why the C translation refused the kernel as a whole, or null}.
"""
from __future__ import annotations
import ast, collections, dataclasses, functools, hashlib, json, os, re, sys
from mockgpu import config, events
from mockgpu.errors import InvalidInstruction

_seen:set[tuple] = set()                # (isa, code, path) recorded by this process
_classified:dict[tuple, dict] = {}      # (isa, code) -> the kernel's classification

def _append(record:dict):
  line = (json.dumps(record, sort_keys=True) + "\n").encode()
  fd = os.open(config.coverage_file(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
  try: os.write(fd, line)
  finally: os.close(fd)

def _record(isa:str, key, path:str, code, classify):
  """One line the first time this process runs kernel `key` on `path`; code() identifies the kernel across processes."""
  if (isa, key, path) in _seen: return
  _seen.add((isa, key, path))
  if (facts := _classified.get((isa, key))) is None: facts = _classified[(isa, key)] = classify()
  _append({"isa": isa, "kernel": hashlib.sha256(code()).hexdigest()[:16], "path": path, "pid": os.getpid(), **facts})

# *** RDNA ***

def rdna_dispatch(family:str, code:bytes, native:bool, ftz32:bool, ftz16:bool, lanes:int):
  """The hook of the RDNA executor: a dispatch of the kernel `code` (waves of `lanes`) ran on the C path (native) or on
  numpy."""
  if config.coverage_file() is None: return
  ident = code + bytes([ftz32, ftz16, lanes])
  _record(family, (code, ftz32, ftz16, lanes), "C" if native else "numpy", lambda: ident,
          lambda: _cached(family, ident, lambda: _rdna_classify(family, code, ftz32, ftz16, lanes)))

@functools.cache
def _version() -> str:
  """Changes with the backends whose verdicts a classification holds (the numpy backend's VERSION covers the table,
  the operand model and the numpy side)."""
  from mockgpu.compiler.rdna.backends import c as cgen, numpy as translate
  h = hashlib.sha256(translate.VERSION.encode())
  for module in (cgen, sys.modules[__name__]):
    with open(module.__file__, "rb") as f: h.update(f.read())
  return h.hexdigest()[:16]

def _cached(family:str, ident:bytes, classify) -> dict:
  """A kernel's classification, made once per machine: decoding a kernel and translating it instruction by instruction
  costs about as much as running an op-suite case (tinygrad's decoder dominates), so it goes to the translation cache."""
  from mockgpu.compiler.cache import translated
  ns:dict = {}
  exec(translated(kind=f"coverage-{family}", version=_version(), data=ident, build=lambda: f"FACTS = {classify()!r}\n"), ns)
  return ns["FACTS"]

def rdna_names(inst) -> tuple[str, ...]:
  """An instruction's names as the report lists them: tinygrad's opcode name (DPP marked), each half of a VOPD."""
  from mockgpu.compiler.rdna.decode import Bad, op_name
  if isinstance(inst, Bad): return (f"undecodable word 0x{inst.word:08x}",)
  cls = type(inst).__name__
  if cls.startswith("VOPD"): return (inst.opx.name, inst.opy.name)
  return (f"{op_name(inst)} {cls.rpartition('_')[2]}" if "DPP" in cls else op_name(inst),)

_RAISE = re.compile(r"raise unsupported\(st, (\d+), ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)")

def _rdna_classify(family:str, code:bytes, ftz32:bool, ftz16:bool, lanes:int) -> dict:
  from mockgpu.compiler.rdna import decode
  from mockgpu.compiler.rdna.backends import numpy as translate
  insts = decode.walk(code, family)
  names = {pc: rdna_names(i) for pc, i in insts.items()}
  # one block per instruction: the translators stop a block at its first unsupported instruction, which would hide the rest
  singles = [decode.Block(pc, [(pc, inst)]) for pc, inst in sorted(insts.items())]
  refused = {int(pc): ast.literal_eval(why) for pc, why in
             _RAISE.findall(translate.Translator(singles, ftz32, ftz16, family, lanes).source())}
  refused.update({pc: i.reason for pc, i in insts.items() if isinstance(i, decode.Bad)})
  refused = {pc: why for pc, why in refused.items() if pc in names}  # not "execution runs past the end", which is no instruction
  no_c, declined = _rdna_c_refusals(singles, ftz32, ftz16, family, lanes)
  def marked(whys:dict[int, str]) -> dict[str, str]: return {n: why for pc, why in whys.items() for n in names[pc]}
  return {"ops": sorted({n for ns in names.values() for n in ns}),
          "unsupported": marked({pc: why for pc, why in refused.items() if not why.startswith(decode.INVALID)}),
          "invalid": marked({pc: why for pc, why in refused.items() if why.startswith(decode.INVALID)}),
          "numpy_only": marked({pc: why for pc, why in no_c.items() if pc not in refused}), "declined": declined}

def _rdna_c_refusals(singles:list, ftz32:bool, ftz16:bool, family:str, lanes:int) -> tuple[dict[int, str], str|None]:
  """The instructions the C translator refuses (NoNative), by PC, and its refusal of the kernel as a whole. Each refused
  instruction is replaced by an undecodable word (which C translates to a raise) and the kernel translated again."""
  from mockgpu.compiler.rdna import decode
  from mockgpu.compiler.rdna.backends import c as cgen
  blocks, refused = list(singles), {}
  while True:
    t = None
    try:
      t = cgen.CTranslator(blocks, ftz32, ftz16, family, lanes)
      t.source()
      return refused, None
    except cgen.NoNative as e:
      pc = getattr(t, "pc", None)
      if t is None or pc is None or pc in refused: return refused, str(e)  # not one instruction's: the whole kernel's
      refused[pc] = str(e)
      blocks = [decode.Block(pc, [(pc, decode.Bad(0, "not translated"))]) if b.start == pc else b for b in blocks]

# *** PTX ***

def ptx_launch(kernel, native:bool):
  """The hook of the PTX executor: a launch of `kernel` (a PTXKernel) ran on the C path (native) or on numpy."""
  if config.coverage_file() is None: return
  _record("ptx", (kernel.module.text, kernel.name), "C" if native else "numpy", lambda: f"{kernel.name}\n{kernel.module.text}".encode(),
          lambda: _ptx_classify(kernel))

def ptx_name(ins) -> str: return ".".join((ins.op, *ins.mods))

def _ptx_classify(kernel) -> dict:
  from mockgpu.compiler.ptx import parser as P
  m = P.parse(kernel.module.text)
  fns = [f for f in m.functions.values() if f.name == kernel.name or not f.entry]  # the entry and the functions it may call
  ops = sorted({ptx_name(i) for f in fns for i in f.body if isinstance(i, P.Instr)})
  return {"ops": ops, "unsupported": {}, "invalid": {}, "numpy_only": {}, "declined": _ptx_declined(kernel)}

def _ptx_declined(kernel) -> str|None:
  """Why the C translation refuses the kernel (cgen.NoNative), or None, whether or not it was tried yet: as for RDNA, the
  verdict is the translator's, not the launch's (a kernel runs on numpy until it is hot)."""
  from mockgpu.emulators.ptx import native
  return native.refusal(kernel)

_PTX_LINE = re.compile(r"PTX line (\d+)")

def ptx_rejected(text:str, error:Exception):
  """The hook of PTX module loading: the module did not translate (UnsupportedInstruction naming a PTX line)."""
  if config.coverage_file() is None or ("ptx", text, "rejected") in _seen: return
  _seen.add(("ptx", text, "rejected"))
  name = "(module)"
  if (m := _PTX_LINE.search(str(error))) is not None and 0 < int(m[1]) <= len(lines := text.splitlines()):
    words = lines[int(m[1]) - 1].split()
    words = words[1:] if words and words[0].startswith("@") else words  # a guard predicate
    name = words[0].rstrip(";") if words else name
  kind = "invalid" if isinstance(error, InvalidInstruction) else "unsupported"
  _append({"isa": "ptx", "kernel": hashlib.sha256(text.encode()).hexdigest()[:16], "path": "rejected", "pid": os.getpid(),
           "ops": [name], "unsupported": {}, "invalid": {}, "numpy_only": {}, "declined": None, kind: {name: str(error)}})

# *** the executors' reports (events.notify) ***

def _kernel_ran(r:dict):
  if r["isa"] == "ptx": ptx_launch(r["kernel"], r["native"])
  else: rdna_dispatch(r["isa"], r["code"], r["native"], r["ftz32"], r["ftz16"], r["lanes"])

def _kernel_rejected(r:dict): ptx_rejected(r["text"], r["error"])

def listen():
  """Record the executors' kernels from now on (each record costs one setting lookup unless MOCKGPU_COVERAGE is set)."""
  events.listen("kernel_ran", _kernel_ran)
  events.listen("kernel_rejected", _kernel_rejected)

# *** the report ***

@dataclasses.dataclass
class Row:
  kernels: set = dataclasses.field(default_factory=set)
  paths: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # path -> kernels run that way
  unsupported: str|None = None
  invalid: str|None = None
  numpy_only: str|None = None

def read(path:str, offset:int=0) -> tuple[list[dict], int]:
  """The records of a MOCKGPU_COVERAGE file from byte `offset` on, and the offset past the last complete line (a line
  another process is still writing waits for the next read). A complete line that is not a record raises ValueError."""
  with open(path, "rb") as f:
    f.seek(offset)
    data = f.read()
  end, out = data.rfind(b"\n") + 1, []
  for line in data[:end].splitlines():
    if not line.strip(): continue
    try: rec = json.loads(line)
    except ValueError as e: raise ValueError(f"{path}: not a coverage record: {line[:80]!r} ({e})") from None
    if not isinstance(rec, dict) or not {"isa", "kernel", "path", "ops"} <= rec.keys():
      raise ValueError(f"{path}: not a coverage record (needs isa, kernel, path, ops): {line[:80]!r}")
    out.append(rec)
  return out, offset + end

def unimplemented(records:list[dict]) -> dict[str, dict[str, str]]:
  """Per family, the instructions the records mark unimplemented (or invalid), with why."""
  out:dict[str, dict[str, str]] = {}
  for r in records:
    for mark in ("unsupported", "invalid"):
      if r.get(mark): out.setdefault(r["isa"], {}).update(r[mark])
  return out

def summarize(records:list[dict]) -> dict[str, dict[str, Row]]:
  """Per ISA family, per instruction: the kernels that contained it, the paths they ran on, and its marks."""
  out:dict[str, dict[str, Row]] = {}
  done = set()
  for r in records:
    rows = out.setdefault(r["isa"], {})
    for name in r["ops"]:
      row = rows.setdefault(name, Row())
      row.kernels.add(r["kernel"])
      if (r["kernel"], r["path"], name) not in done: row.paths[r["path"]] += 1
      done.add((r["kernel"], r["path"], name))
      for mark in ("unsupported", "invalid", "numpy_only"):
        if name in (r.get(mark) or {}): setattr(row, mark, r[mark][name])
  return out

def declined(records:list[dict]) -> dict[str, collections.Counter]:
  """Per family, why the C translation refused kernels as a whole, with the number of kernels."""
  out:dict[str, collections.Counter] = {}
  seen = {(r["isa"], r["kernel"], r["declined"]) for r in records if r.get("declined")}
  for isa, _, why in seen: out.setdefault(isa, collections.Counter())[why] += 1
  return out

def report(path:str) -> tuple[str, int]:
  """The text `mockgpu coverage FILE` prints, and its exit status: 1 when an instruction is unimplemented."""
  records, _ = read(path)
  lines, bad = [], 0
  for isa, rows in sorted(summarize(records).items()):
    kernels = {k for row in rows.values() for k in row.kernels}
    unimpl = sorted(n for n, r in rows.items() if r.unsupported or r.invalid)
    only = sorted(n for n, r in rows.items() if r.numpy_only and not (r.unsupported or r.invalid))
    bad += len(unimpl)
    lines.append(f"{isa}: {len(rows)} instructions in {len(kernels)} kernels; {len(unimpl)} unimplemented, "
                 f"{len(only)} keep their kernels on numpy (no C translation)")
    lines.append(f"  {'instruction':40s} {'kernels':>7s}  {'runs by path':22s} mark")
    for name in unimpl + only + sorted(set(rows) - set(unimpl) - set(only)):
      r = rows[name]
      paths = " ".join(f"{p} {n}" for p, n in sorted(r.paths.items()))
      mark = (f"UNIMPLEMENTED: {r.unsupported}" if r.unsupported else f"INVALID: {r.invalid}" if r.invalid else
              f"numpy only: {r.numpy_only}" if r.numpy_only else "")
      lines.append(f"  {name:40s} {len(r.kernels):7d}  {paths:22s} {mark}".rstrip())
    for why, n in sorted(declined(records).get(isa, {}).items()):
      lines.append(f"  C refused {n} kernel{'s' if n != 1 else ''} as a whole: {why}")
  return "\n".join(lines) if lines else f"{path}: no kernels recorded", int(bad > 0)
