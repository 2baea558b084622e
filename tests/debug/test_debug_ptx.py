"""The debugger on MOCK+NV (mockgpu/debug/ptx_target.py over the PTX reference stepper): scripted sessions through the
Python API, each in a fresh process with tinygrad's PTX renderer. Values are checked against numpy computed from the
inputs, the stepper's state against itself before and after a reverse step."""
import json
import numpy as np
import pytest
from conftest import run_tinygrad

DEV = "MOCK+NV:PTX"
# tinygrad's own PTX renderer, and CUDA C through NVRTC to PTX
DEVS = pytest.mark.parametrize("dev", ["MOCK+NV:PTX", "MOCK+NV:CUDA"])

def records(p, tag="REC") -> list:
  return [json.loads(l[len(tag) + 1:]) for l in p.stdout.splitlines() if l.startswith(tag + " ")]

# attach the PTX adapter with a session; the byte addresses a warp's next ld.global reads, from the parsed instruction
# (its address operand) and the warp's registers
PRELUDE = """
import json, numpy as np
from tinygrad import Tensor, Device
import mockgpu.debug as md
from mockgpu.debug import ptx_target
from mockgpu.compiler.ptx import syntax as P

debugging = md.session   # the public API: a session attaches the PTX adapter as well as the RDNA one

def next_instr(t):
  c, w = t.selected
  st = t.cta(c)
  pc = st.warp_pc(w)
  return None if pc is None else st.program.instr(*pc)

def load_addresses(t):
  ins = next_instr(t)
  if ins is None or ins.op != "ld" or "global" not in ins.mods: return None
  dst, addr = ins.args[0], ins.args[1]
  regs = t.registers()
  dsts = list(dst.items) if isinstance(dst, P.Vec) else [dst]
  base = regs[addr.base.ptx].astype(np.uint64)
  lanes = np.flatnonzero(regs["active"])
  return [(d.ptx, [(int(l), int(base[l]) + addr.offset + 4 * i) for l in lanes]) for i, d in enumerate(dsts)]

def va(x): return int(x.uop.base.buffer._buf.va_addr)
"""

@DEVS
def test_matmul_step_20_then_a_register_of_every_thread_of_the_warp(dev):
  """Break at the launch of a matmul kernel and step 20 instructions of warp 0. Before each global load the address of
  every thread at it comes from the parsed instruction and the registers; after 20 steps the thread table of the last
  load's destination holds, for every such thread, the input element at its address."""
  p = run_tinygrad(dev, PRELUDE + """
an = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
bn = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
a, b = Tensor(an).realize(), Tensor(bn).realize()
inputs = [(va(a), an), (va(b), bn)]
from debuginputs import element
def at_stop(dbg, stop):
  t, loads, ran = dbg.target, [], 0
  for _ in range(20):
    if (r:=load_addresses(t)) is not None: loads += r
    ran += dbg.step()
  reg, addrs = loads[-1]
  rows = ptx_target.thread_table(t, reg, "f").splitlines()[1:]
  shown = {int(l.split()[1]): float(l.split()[-1]) for l in rows}
  print("REC", json.dumps({"ran": ran, "loads": len(loads), "threads": len(addrs), "rows": len(rows),
                           "ok": [shown[l] == element(inputs, x) for l, x in addrs], "unit": list(t.selected), "warp": len(t.threads())}))
with debugging(break_kernel="r_*", on_stop=at_stop) as dbg:
  c = (a @ b).numpy()
print("REC", json.dumps({"result": bool(np.allclose(c, an @ bn, rtol=1e-5, atol=1e-5)), "stops": len(dbg.stops)}))
""")
  rec, end = records(p)
  assert rec["ran"] == 20 and rec["loads"] >= 1 and rec["threads"] >= 1 and rec["rows"] == rec["warp"] and rec["unit"] == [0, 0]
  assert all(rec["ok"]), rec
  assert end == {"result": True, "stops": 1}

@DEVS
def test_condition_stops_at_the_first_nan_of_log_and_names_the_thread(dev):
  """(x-1).log() is NaN where x < 1: one element of 64. A condition over every 32-bit register as f32 stops after the
  instruction that first produced a NaN, naming one lane; that lane's thread holds the address of the element (a
  64-bit register pointing at or just below it, whichever the renderer's vector width)."""
  p = run_tinygrad(dev, PRELUDE + """
xn = np.full(64, 3.0, np.float32)
xn[37] = 0.5
x = Tensor(xn).realize()
def at_stop(dbg, stop):
  t = dbg.target
  lane = stop.lanes[0]
  regs = t.registers()
  target_addr = va(x) + 4 * 37
  holds = lambda l: any(r.dtype.itemsize == 8 and 0 <= target_addr - int(r.view(np.uint64)[l]) < 16 for k, r in regs.items()
                        if k.startswith("%") and r.dtype != bool)
  print("REC", json.dumps({"kind": stop.kind, "lanes": stop.lanes, "unit": list(stop.unit), "holds": holds(lane),
                           "others": [l for l in range(32) if l != lane and holds(l)],
                           "nan": bool(np.isnan(t.namespace()["regs"][:, lane].view(np.float32)).any()), "message": stop.message}))
  dbg.delete(stop.breakpoint.id)   # the first NaN only: the instructions after it propagate it
with debugging(condition="isnan(f32(written))", kernel="*", on_stop=at_stop) as dbg:
  y = (x - 1).log().numpy()
print("REC", json.dumps({"stops": len(dbg.stops), "nan_at": [int(i) for i in np.flatnonzero(np.isnan(y))]}))
""")
  rec, end = records(p)
  assert rec["kind"] == "condition" and len(rec["lanes"]) == 1 and rec["nan"], rec
  assert rec["holds"] and rec["others"] == [], rec
  assert end == {"stops": 1, "nan_at": [37]}

def test_watch_stops_at_the_store_into_a_buffer():
  """A watch on the output Buffer stops after the first store into it; the stored element is x*2+1 of its index."""
  p = run_tinygrad(DEV, PRELUDE + """
xn = np.arange(64, dtype=np.float32)
x = Tensor(xn).realize()
out = Tensor.zeros(64).contiguous().realize()
def at_stop(dbg, stop):
  t = dbg.target
  i = (stop.address - va(out)) // 4
  got = np.frombuffer(t.read_memory(stop.address, 4), np.float32)[0]
  print("REC", json.dumps({"kind": stop.kind, "index": int(i), "ok": float(got) == float(xn[i] * 2 + 1), "lanes": stop.lanes,
                           "line": t.pc() > 0 or t.done()}))
with debugging(on_stop=at_stop) as dbg:
  dbg.watch(out)
  out.assign(x * 2 + 1).realize()
print("REC", json.dumps({"stops": len(dbg.stops), "result": bool((out.numpy() == xn * 2 + 1).all())}))
""")
  rec, end = records(p)
  assert rec["kind"] == "watch" and 0 <= rec["index"] < 64 and rec["ok"] and rec["lanes"], rec
  assert end["result"] and end["stops"] >= 1

def test_reverse_step_returns_exactly_to_the_previous_state():
  """After 12 steps, the rest of warp 0 (its stores included) and as many reverse steps give back every register of
  every thread of every CTA set up, the pcs, shared memory, the counters and the output buffer, compared in full; the
  launch still ends right."""
  p = run_tinygrad(DEV, PRELUDE + """
an = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
a = Tensor(an).realize()
def state(t, out_addr, nbytes):
  snap = t.snapshot()
  return snap, t.read_memory(out_addr, nbytes)
def same(s1, s2):
  (a1, m1), (a2, m2) = s1, s2
  if m1 != m2 or a1.keys() != a2.keys(): return False
  for c in a1:
    n1, n2 = a1[c][0], a2[c][0]
    regs = [k for k in n1 if not k.startswith("_")]
    if any(np.asarray(n1[k]).tobytes() != np.asarray(n2[k]).tobytes() for k in regs): return False
    if not all(np.array_equal(x, y) for x, y in zip(a1[c][1:3] + a1[c][4:6], a2[c][1:3] + a2[c][4:6])): return False
    if a1[c][3] != a2[c][3] or a1[c][7] != a2[c][7]: return False
  return True
def at_stop(dbg, stop):
  t = dbg.target
  out = [b for b in ptx_target_buffers() if b[1] == an.nbytes and b[0] != va(a)][0]
  dbg.step(12)
  s1 = state(t, out[0], out[1])
  ran = dbg.step(1000)   # to the end of warp 0: its stores too
  s2 = state(t, out[0], out[1])
  back = dbg.reverse_step(ran)
  s3 = state(t, out[0], out[1])
  print("REC", json.dumps({"ran": ran, "back": back, "exact": same(s1, s3), "moved": not same(s1, s2), "stored": s1[1] != s2[1]}))
def ptx_target_buffers():
  from mockgpu.debug import buffers
  return [(b, n) for b, n, _ in buffers.tinygrad_buffers()]
with debugging(break_kernel="*", on_stop=at_stop) as dbg:
  y = (a * 3 + a.exp2()).contiguous().numpy()
print("REC", json.dumps({"result": bool(np.allclose(y, an * 3 + np.exp2(an), rtol=1e-5))}))
""")
  rec, end = records(p)
  assert rec["back"] == rec["ran"] > 0 and rec["exact"] and rec["moved"] and rec["stored"], rec
  assert end == {"result": True}

OOB = """
.version 7.5
.target {target}
.address_size 64
.visible .entry oob(.param .u64 out)
{{
.reg .pred %p<2>;
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r0, 4;
setp.eq.u32 %p1, %r0, 5;
@%p1 add.s64 %rd2, %rd2, 1048576;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r0;
ret;
}}
"""

def test_post_mortem_names_the_thread_the_address_and_the_buffer():
  """Thread 5 of a hand-written kernel stores 1 MiB past its buffer: the post-mortem stop is at the store, names lane
  5, the faulting address and the nearest allocation; the fault still reaches tinygrad."""
  p = run_tinygrad(DEV, PRELUDE + f"OOB = {OOB!r}\n" + """
from tinygrad.device import TinyELF
from tinygrad.runtime.ops_nv import NVProgram
dev = Device["NV"]
src = OOB.format(target=f"sm_{dev.arch[3:] if dev.arch.startswith('sm_') else dev.arch}")
prg = NVProgram(dev, TinyELF(dev.compiler.compile(src), "oob", None, ()))
out = Tensor.zeros(32, dtype="int32").contiguous().realize()
def at_stop(dbg, stop):
  t = dbg.target
  print("REC", json.dumps({"kind": stop.kind, "lanes": stop.lanes, "address": stop.address, "expected": va(out) + 5 * 4 + 1048576,
                           "at": t.location(), "message": stop.message, "threads": t.fault_threads}))
with debugging(break_kernel="nothing", postmortem="oob", on_stop=at_stop) as dbg:
  try:
    prg(out.uop.base.buffer._buf, global_size=(1, 1, 1), local_size=(32, 1, 1), wait=True)
    print("REC", json.dumps({"raised": None}))
  except Exception as e: print("REC", json.dumps({"raised": type(e).__name__}))
""", check=False)
  recs = records(p)
  assert len(recs) == 2, p.stdout + p.stderr[-3000:]
  rec, end = recs
  assert rec["kind"] == "fault" and rec["lanes"] == [5] and rec["threads"] == [5], rec
  assert rec["address"] == rec["expected"] and "st.global.u32 [%rd3], %r0" in rec["at"], rec
  msg = rec["message"]
  assert f"0x{rec['expected']:x}" in msg and "past the end of the allocation" in msg and "lane 5" in msg, msg
  assert end["raised"] is not None

def test_a_debugged_launch_with_barriers_leaves_memory_as_the_fast_path():
  """A hand-written kernel whose two CTAs of two warps meet at bar.sync over shared memory: run on the fast path, under
  a session that finishes at the launch stop (the whole launch on the stepper), and under a session that matches no
  kernel (it stays on the fast path: no dispatch debugged). All three outputs are the reference's."""
  from support.ptx_native import BARRIER
  p = run_tinygrad(DEV, PRELUDE + f"SRC = {BARRIER!r}\n" + """
from tinygrad.device import TinyELF
from tinygrad.runtime.ops_nv import NVProgram
dev = Device["NV"]
prg = NVProgram(dev, TinyELF(dev.compiler.compile(SRC.replace("sm_89", dev.arch)), "k", None, ()))
def run():
  bufs = [Tensor.zeros(64, dtype="int32").contiguous().realize() for _ in range(4)]
  prg(*[b.uop.base.buffer._buf for b in bufs], global_size=(2, 1, 1), local_size=(64, 1, 1), wait=True)
  return bufs[0].numpy().tolist()
fast = run()
with debugging(break_kernel="k", on_stop=lambda dbg, stop: dbg.finish()) as dbg:
  stepped = run()
with debugging(break_kernel="no_such_kernel") as other:
  plain = run()
print("REC", json.dumps({"fast": fast, "stepped": stepped, "plain": plain, "stops": len(dbg.stops), "debugged": dbg.dispatches,
                         "other": other.dispatches}))
""")
  rec, = records(p)
  t = np.arange(48)
  want = (t * t + (47 - t) ** 2).tolist() + [0] * 16
  assert rec["fast"] == rec["stepped"] == rec["plain"] == want
  assert (rec["stops"], rec["debugged"], rec["other"]) == (1, 1, 0)
