"""The kernel debugger (mockgpu/debug/): scripted sessions on MOCK+AMD through the Python API and the `mockgpu debug`
command line, each in a fresh process. Values are checked against numpy computed from the inputs, or against the same
program run without the debugger."""
import json, os, re, subprocess, sys, textwrap
import numpy as np
import pytest
from conftest import run_tinygrad, HERE

def records(p, tag="REC") -> list:
  return [json.loads(l[len(tag) + 1:]) for l in p.stdout.splitlines() if l.startswith(tag + " ")]

# a kernel in LLVM IR (tinygrad's AMD compiler takes it), run through tinygrad's own AMDProgram
LLVM_KERNEL = """
from tinygrad import Device
from tinygrad.device import TinyELF
from tinygrad.runtime.ops_amd import AMDProgram
def llvm_kernel(name, ir):
  return AMDProgram(Device["AMD"], TinyELF(Device["AMD"].compiler.compile(ir), name, None, ()))
"""

# the byte ranges a global load's active lanes read, from tinygrad's decoding of the instruction and the wave's state
LOAD_RANGES = """
import numpy as np
from mockgpu.compiler.rdna import decode
def load_ranges(w):
  inst = w.st.instruction()
  name = decode.op_name(inst)
  if not name.startswith("GLOBAL_LOAD_B"): return None
  size = int(name[len("GLOBAL_LOAD_B"):]) // 8
  s, v, va = w.state.sgpr, w.state.vgpr, inst.addr.offset - 256
  lanes = np.flatnonzero(w.state.active())
  if inst.saddr.offset == 124:  # saddr off (NULL): a 64-bit address in the VGPR pair
    addr = [int(v[va, l]) | int(v[va + 1, l]) << 32 for l in lanes]
  else:                         # an SGPR-pair base plus a 32-bit offset in the VGPR
    base = int(s[inst.saddr.offset]) | int(s[inst.saddr.offset + 1]) << 32
    addr = [base + int(v[va, l]) for l in lanes]
  return inst.vdst.offset - 256, [(int(l), x + decode.imm_offset(inst), size) for l, x in zip(lanes, addr)]
"""

def test_matmul_step_20_loaded_lanes_match_the_inputs():
  """Break at a matmul kernel's launch and step 20 instructions one at a time. Before each global_load_b32 the address
  of every active lane is computed from tinygrad's decoding of the instruction (vaddr + the SGPR base + offset) and
  the state; after 20 steps the lane table of the last load's destination must hold the input elements at those
  addresses."""
  p = run_tinygrad("MOCK+AMD", LOAD_RANGES + textwrap.dedent("""
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    from debuginputs import element
    an = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    bn = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
    a, b = Tensor(an).realize(), Tensor(bn).realize()
    bufs = [(x.uop.base.buffer._buf.va_addr, xn) for x, xn in ((a, an), (b, bn))]
    def at_stop(dbg, stop):
      t, loads, ran = dbg.target, [], 0
      for _ in range(20):
        w = t.wave()
        if (r:=load_ranges(w)) is not None and r[1][0][2] == 4: loads.append((r[0], [(l, a) for l, a, _ in r[1]]))
        ran += dbg.step()
      reg, addrs = loads[-1]
      table = md.view.lane_table(t, reg, "f").splitlines()[1:]
      shown = {int(l.split()[1].rstrip("*")): float(l.split()[3]) for l in table}
      print("REC", json.dumps({"ran": ran, "loads": len(loads), "lanes": len(addrs),
                               "ok": [shown[l] == element(bufs, a) for l, a in addrs]}))
    with md.session(break_kernel="r_*", on_stop=at_stop) as dbg:
      c = (a @ b).numpy()
    print("REC", json.dumps({"result": bool(np.allclose(c, an @ bn, rtol=1e-5, atol=1e-5)), "stops": len(dbg.stops)}))
  """))
  rec, end = records(p)
  assert rec["ran"] == 20 and rec["loads"] >= 1 and rec["lanes"] >= 1
  assert all(rec["ok"]), rec
  assert end == {"result": True, "stops": 1}

def test_condition_stops_at_the_first_nan_and_names_its_lane():
  """(x-1).log() is NaN where x < 1: here at one element of a 64-element x (one wave). A condition over the VGPRs the
  last instruction wrote stops at the first instruction that produced a NaN and names one lane. Which lane holds that
  element is the renderer's choice (it upcasts: several elements a lane), so it is found from the kernel's loads:
  back at the dispatch's start (reverse-step), the stop's lane must be the one whose global load read x[i]."""
  p = run_tinygrad("MOCK+AMD", LOAD_RANGES + textwrap.dedent("""
    import json
    from tinygrad import Tensor
    import mockgpu.debug as md
    i = 45
    xn = np.linspace(3, 1.5, 64).astype(np.float32)
    xn[i] = 0.25
    x = Tensor(xn).realize()
    addr = x.uop.base.buffer._buf.va_addr + 4 * i
    def at_stop(dbg, stop):
      if len(dbg.stops) > 1: return
      t, n, readers = dbg.target, len(dbg.log), set()
      nan_before = bool(np.isnan(t.registers()["v"].view(np.float32)).any())
      assert dbg.reverse_step(n) == n
      for _ in range(n):
        if (r:=load_ranges(t.wave())) is not None: readers |= {l for l, a, size in r[1] if a <= addr < a + size}
        dbg.step()
      print("REC", json.dumps({"kind": stop.kind, "lanes": stop.lanes, "readers": sorted(readers), "units": len(t.units()),
                               "inst": t.text(stop.pc), "back": len(dbg.log) == n}))
    with md.session(condition="isnan(f32(written))", on_stop=at_stop) as dbg:
      out = (x - 1).log().numpy()
    print("REC", json.dumps({"nan": np.flatnonzero(np.isnan(out)).tolist()}))
  """))
  rec, end = records(p)
  assert end["nan"] == [45]
  assert rec["units"] == 1 and rec["back"] and rec["kind"] == "condition"
  assert len(rec["readers"]) == 1 and rec["lanes"] == rec["readers"], rec

def test_watch_stops_at_the_store_into_a_buffer():
  """A watch on a tinygrad buffer stops after the store into it (not at the loads of the other buffers); the stored
  values are what the kernel computes for the elements at the store's addresses."""
  p = run_tinygrad("MOCK+AMD", """
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    an = np.arange(64, dtype=np.float32)
    a = Tensor(an).realize()
    out = Tensor.zeros(64).contiguous().realize()
    va = out.uop.base.buffer._buf.va_addr
    def at_stop(dbg, stop):
      wr = dbg.log[-1].writes[-1]
      print("REC", json.dumps({"kind": stop.kind, "offset": stop.address - va, "lanes": stop.lanes,
                               "stored": [[int(a) - va, float(x)] for a, x in zip(wr.addrs, wr.new.view(np.float32))]}))
    with md.session(watch=out, on_stop=at_stop) as dbg:
      out.assign(Tensor(an) * 2 + 1).realize()
    print("REC", json.dumps({"final": out.numpy().tolist()}))
  """)
  recs = records(p)
  assert recs[0]["kind"] == "watch" and 0 <= recs[0]["offset"] < 256 and recs[0]["lanes"]
  for off, x in recs[0]["stored"]: assert x == (off // 4) * 2 + 1
  assert recs[-1]["final"] == [i * 2 + 1 for i in range(64)]

def test_reverse_step_returns_exactly_to_the_previous_state():
  """A reduction kernel that uses LDS and stores its result, stepped from its launch to its end: after every step,
  reverse-step gives back the state before it and step again the state after it (every wave's SGPRs, VGPRs, LDS, PC,
  and tinygrad's buffers); then reverse-stepping all the way gives back the launch state, all mapped memory compared."""
  p = run_tinygrad("MOCK+AMD", """
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    from mockgpu.debug import buffers
    x = Tensor((np.arange(4096) % 7).astype(np.float32)).realize()
    ranges = []
    def regs(t):
      return {u: (w.state.sgpr.copy(), w.state.vgpr.copy(), w.state.lds.copy(), w.state.scratch.copy(), w.state.pc, w.state.done)
              for u, w in t.waves.items()}
    def same_regs(a, b):
      return a.keys() == b.keys() and all(all(np.array_equal(x, y) for x, y in zip(a[u], b[u])) for u in a)
    def bufs(t): return {va: t.read_memory(va, n) for va, n in ranges}
    def mem(t): return {m.va: m.u8().copy() for m in t.mem.mem.mappings()}
    def at_stop(dbg, stop):
      t = dbg.target
      ranges[:] = [(va, n) for va, n, _ in buffers.tinygrad_buffers()]
      start, start_mem, exact, kinds = regs(t), mem(t), [], set()
      while not t.done():
        before = (regs(t), bufs(t))
        dbg.step()
        kinds |= set(dbg.log[-1].arrays) | ({"memory"} if dbg.log[-1].writes else set())
        after = (regs(t), bufs(t))
        dbg.reverse_step()
        exact.append(same_regs(before[0], regs(t)) and before[1] == bufs(t))
        dbg.step()
        exact.append(same_regs(after[0], regs(t)) and after[1] == bufs(t))
      n = len(dbg.log)
      undone = dbg.reverse_step(n)
      back = mem(t)
      print("REC", json.dumps({"steps": n, "undone": undone, "exact": all(exact), "checks": len(exact), "start": same_regs(start, regs(t)),
                               "memory": start_mem.keys() == back.keys() and all(np.array_equal(start_mem[k], back[k]) for k in back),
                               "kinds": sorted(kinds), "units": len(t.units())}))
    with md.session(break_kernel="r_*", on_stop=at_stop) as dbg:
      total = x.sum().item()
    print("REC", json.dumps({"total": total}))
  """)
  rec, end = records(p)
  assert rec["units"] == 1 and rec["exact"] and rec["start"] and rec["memory"]
  assert rec["undone"] == rec["steps"] > 20 and rec["checks"] == 2 * rec["steps"]
  assert {"sgpr", "vgpr", "lds", "memory"} <= set(rec["kinds"]), rec["kinds"]  # the steps changed every kind of state
  assert end["total"] == float((np.arange(4096) % 7).sum())

def test_reverse_continue_goes_back_to_the_last_breakpoint_hit():
  p = run_tinygrad("MOCK+AMD", """
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    a = Tensor(np.arange(64, dtype=np.float32)).realize()
    seen = []
    def at_stop(dbg, stop):
      if stop.kind != "launch": return
      t = dbg.target
      dbg.step(4)
      pc = t.pc()
      dbg.break_at(pc, t.kernel)
      dbg.step(3)
      back = dbg.reverse_continue()
      seen.append({"pc": pc, "back_pc": t.pc(), "kind": back.kind, "steps": len(dbg.log)})
      start = dbg.reverse_continue()
      seen.append({"kind": start.kind, "steps": len(dbg.log), "pc": t.pc()})
    with md.session(break_kernel="E_*", on_stop=at_stop, postmortem=False) as dbg:
      out = (a * 3).numpy()
    print("REC", json.dumps({"seen": seen, "ok": out.tolist() == (np.arange(64) * 3).tolist()}))
  """)
  rec, = records(p)
  hit, start = rec["seen"]
  assert hit["kind"] == "break" and hit["back_pc"] == hit["pc"] and hit["steps"] == 4
  assert start == {"kind": "start", "steps": 0, "pc": 0}
  assert rec["ok"]

def test_post_mortem_names_the_lane_the_address_and_the_allocation():
  """Lane l of a hand-written kernel stores to element l * 2**20 of a 64-element buffer: lane 0 stays inside it, lane
  1 writes 4 MiB past its start, outside every mapping (one page past it held a later allocation in some runs: the
  layout of the process's allocations is not the test's to choose). The post-mortem stop is at that store."""
  p = run_tinygrad("MOCK+AMD", LLVM_KERNEL + textwrap.dedent("""
    import json
    from tinygrad import Tensor
    import mockgpu.debug as md
    prg = llvm_kernel("oob", '''
    define amdgpu_kernel void @oob(float addrspace(1)* noalias align 32 %data0) #0 {
      %lid = call i32 @llvm.amdgcn.workitem.id.x()
      %idx = shl i32 %lid, 20
      %p = getelementptr inbounds float, float addrspace(1)* %data0, i32 %idx
      store float 1.0, float addrspace(1)* %p
      ret void
    }
    declare i32 @llvm.amdgcn.workitem.id.x()
    attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,32" }''')
    # the buffer after the kernel's code upload, so no later allocation can take the page past it before the launch
    a = Tensor.zeros(64).contiguous().realize()
    va = a.uop.base.buffer._buf.va_addr
    def at_stop(dbg, stop):
      mem = dbg.target.mem.mem
      try: dbg.step()
      except RuntimeError as e: again = str(e)
      print("REC", json.dumps({"kind": stop.kind, "lanes": stop.lanes, "address": stop.address, "va": va, "message": stop.message,
                               "inst": dbg.target.text(dbg.target.pc()), "lane1_unmapped": not mem.is_mapped(va + (4 << 20), 4),
                               "again": again, "back": dbg.reverse_step(), "pc_back": dbg.target.pc() < stop.pc}))
    with md.session(postmortem="oob", on_stop=at_stop):
      try: prg(a.uop.base.buffer._buf, global_size=(1, 1, 1), local_size=(32, 1, 1), wait=True)
      except RuntimeError as e: print("REC", json.dumps({"error": str(e).splitlines()[0]}))
  """), check=False)
  stop, err = records(p)
  assert stop["lane1_unmapped"] and stop["kind"] == "fault" and stop["lanes"] == [1]
  assert stop["address"] == stop["va"] + (4 << 20) and stop["inst"].startswith("global_store_b32")
  # the allocation nearest the address is named: the tinygrad buffer, or whichever allocation the process put nearer
  assert f"write of 4 bytes at 0x{stop['va'] + (4 << 20):x} faults in lane 1" in stop["message"]
  assert f"nearest tinygrad buffer: dtypes.float[64] at 0x{stop['va']:x} (256 bytes, offset +0x400000)" in stop["message"] \
    or re.search(r"bytes (past the end of|before) the allocation at 0x", stop["message"]), stop["message"]
  assert err["error"].startswith(f"MMU fault: 0x{stop['va'] + (4 << 20):X}")  # the fault still reaches tinygrad
  assert stop["again"].startswith("the dispatch stopped at: GPU page fault: write of 4 bytes") and stop["back"] == 1 and stop["pc_back"]

BARRIER_IR = '''
@lds = internal addrspace(3) global [64 x float] undef, align 16
define amdgpu_kernel void @swap(float addrspace(1)* noalias align 32 %out) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %f = uitofp i32 %tid to float
  %g = uitofp i32 %gid to float
  %t3 = fmul float %f, 3.0
  %v = fadd float %t3, %g
  %p = getelementptr inbounds [64 x float], [64 x float] addrspace(3)* @lds, i32 0, i32 %tid
  store float %v, float addrspace(3)* %p
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r = sub i32 63, %tid
  %q = getelementptr inbounds [64 x float], [64 x float] addrspace(3)* @lds, i32 0, i32 %r
  %x = load float, float addrspace(3)* %q
  %base = mul i32 %gid, 64
  %i = add i32 %base, %tid
  %o = getelementptr inbounds float, float addrspace(1)* %out, i32 %i
  store float %x, float addrspace(1)* %o
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="64,64" }'''

def test_debugged_dispatch_runs_every_wave_with_barriers_and_shared_lds():
  """Two-wave workgroups: each lane writes LDS, waits at s_barrier, reads the element the other wave wrote. Under
  the debugger (every dispatch on the stepper) memory ends as numpy computes it and as the fast path leaves it."""
  p = run_tinygrad("MOCK+AMD", LLVM_KERNEL + textwrap.dedent(f"""
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    prg = llvm_kernel("swap", {BARRIER_IR!r})
    def run():
      out = Tensor.zeros(3 * 64).contiguous().realize()
      prg(out.uop.base.buffer._buf, global_size=(3, 1, 1), local_size=(64, 1, 1), wait=True)
      return out.numpy()
    from mockgpu.compiler.rdna import decode
    fast = run()
    def at_launch(dbg, stop):
      t = dbg.target
      ops = {{decode.op_name(i) for i in t.wave().st.insts.values()}}
      print("REC", json.dumps({{"barrier": "S_BARRIER" in ops, "lds": any(o.startswith("DS_") for o in ops), "waves": t.waves_per_group}}))
      dbg.finish()
    with md.session(break_kernel="swap", on_stop=at_launch) as dbg: debugged = run()
    tid, gid = np.arange(64), np.arange(3)[:, None]
    want = ((63 - tid) * 3 + gid).astype(np.float32).reshape(-1)
    print("REC", json.dumps({{"fast": fast.tolist() == want.tolist(), "debugged": debugged.tolist() == want.tolist(),
                             "dispatches": dbg.dispatches, "stops": len(dbg.stops)}}))
  """))
  assert records(p) == [{"barrier": True, "lds": True, "waves": 2}, {"fast": True, "debugged": True, "dispatches": 1, "stops": 1}]

def test_debugged_tinygrad_kernels_match_the_fast_path():
  """Every kernel of a matmul, a reduction over LDS and a max runs on the stepper (a condition that never holds):
  the results are bit-identical to the same program's fast-path results."""
  p = run_tinygrad("MOCK+AMD", """
    import json, numpy as np
    from tinygrad import Tensor
    import mockgpu.debug as md
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal(1024).astype(np.float32)).realize()
    m = Tensor(rng.standard_normal((8, 8)).astype(np.float32)).realize()
    work = lambda: [x.sum().numpy(), (m @ m).numpy(), m.max(axis=1).numpy(), (x.exp() * 2).numpy()]
    fast = work()
    with md.session(condition="False") as dbg: debugged = work()
    print("REC", json.dumps({"same": [a.tobytes() == b.tobytes() for a, b in zip(fast, debugged)], "dispatches": dbg.dispatches}))
  """)
  rec, = records(p)
  assert rec["same"] == [True] * 4 and rec["dispatches"] >= 4

def test_kernels_not_matched_stay_on_the_fast_path():
  p = run_tinygrad("MOCK+AMD", """
    import json
    from tinygrad import Tensor
    from mockgpu import events
    import mockgpu.debug as md
    hook_before = events.intercepting("rdna_dispatch")
    with md.session(break_kernel="no_such_kernel*") as dbg:
      out = (Tensor([1., 2, 3]) + 1).tolist()
    print("REC", json.dumps({"before": hook_before == [], "after": events.intercepting("rdna_dispatch") == [], "dispatches": dbg.dispatches,
                             "out": out}))
  """)
  assert records(p) == [{"before": True, "after": True, "dispatches": 0, "out": [2.0, 3.0, 4.0]}]

def test_condition_errors_are_named():
  p = run_tinygrad("MOCK+AMD", """
    from tinygrad import Tensor
    import mockgpu.debug as md
    try:
      with md.session(condition="v[3] +"): pass
    except md.ConditionError as e: print("ERR1", e)
    with md.session(condition="no_such_name > 1"):
      try: (Tensor([1., 2, 3]) + 1).tolist()
      except md.ConditionError as e: print("ERR2", e)
  """, check=False)
  assert "ERR1 condition 'v[3] +'" in p.stdout
  assert "ERR2 condition #1 'no_such_name > 1'" in p.stdout and "NameError" in p.stdout and "workgroup 0 wave 0" in p.stdout

PROGRAM = """
import numpy as np
from tinygrad import Tensor
a = Tensor(np.arange(64, dtype=np.float32).reshape(8, 8)).realize()
b = Tensor(np.full((8, 8), 2, dtype=np.float32)).realize()
print("RESULT", (a @ b).numpy().sum())
"""

def debug_cli(tmp_path, *args, env=None) -> subprocess.CompletedProcess:
  prog = tmp_path / "prog.py"
  prog.write_text(PROGRAM)
  return subprocess.run([sys.executable, "-m", "mockgpu", "debug", *args, "--", "python", str(prog)], cwd=HERE, text=True,
                        capture_output=True, timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, "DEV": "MOCK+AMD", **(env or {})})

def lane_values(out:str, reg:int) -> dict[int, float]:
  lines = out.splitlines()
  i = lines.index(f"v{reg}:")
  vals = {}
  for l in lines[i + 1:]:
    if not l.startswith("  lane "): break
    f = l.split()
    vals[int(f[1].rstrip("*"))] = float(f[3])
  return vals

def test_cli_ex_commands(tmp_path):
  """-ex commands: break at the launch, step, print a VGPR in every lane (against `print` of the same register through
  a Python expression), reverse-step, the selected wave, and continue; the program's result is unchanged."""
  p = debug_cli(tmp_path, "--batch", "-ex", "break r_*", "-ex", "step 12", "-ex", "print v0 d", "-ex", "print i32(v[0]).tolist()",
                "-ex", "reverse-step 12", "-ex", "where", "-ex", "info registers", "-ex", "continue")
  assert p.returncode == 0, p.stderr[-3000:]
  out = p.stdout
  assert "stopped: launch of r_" in out and "=> 0x0000" in out
  assert "12 instructions\n" in out and "12 instructions undone" in out
  table = lane_values(out, 0)
  listed = eval(next(l for l in out.splitlines() if l.startswith("[")))
  assert [int(table[l]) for l in range(32)] == listed
  assert f"RESULT {float((np.arange(64).reshape(8, 8) @ np.full((8, 8), 2)).sum())}" in out
  assert "EXEC 0x" in out and out.count(": 0x0000 (PC 0x") >= 2  # back at the entry after the reverse steps

def test_cli_commands_file_and_errors(tmp_path):
  """--commands FILE runs the same commands; an unknown command is reported and makes the exit status 1; when the
  commands run out the program finishes without its breakpoints."""
  cmds = tmp_path / "cmds"
  cmds.write_text("# a comment\nbreak r_*\nrun\nstep 3\nwaves\nwave 0 1\nno-such-command\nlds 0 4\nx/4f buf0\n")
  p = debug_cli(tmp_path, "--commands", str(cmds))
  out = p.stdout
  assert p.returncode == 1, p.stderr[-3000:]
  assert "error: unknown command 'no-such-command'" in out
  assert "r_8_8_8 workgroup 0 wave 1: 0x0000" in out and "workgroup 0 wave 1 of 2 waves" in out
  assert "(no more commands: continuing without breakpoints)" in out and "RESULT" in out

def test_post_mortem_at_a_budget_stop():
  """MOCKGPU_BUDGET counts the stepper's wave-instructions too: the stop comes after exactly that many, at the wave's
  next instruction, and the dispatch still ends with the budget error."""
  p = run_tinygrad("MOCK+AMD", """
    import json
    from tinygrad import Tensor
    import mockgpu.debug as md
    a = Tensor([1., 2, 3]).realize()
    def at_stop(dbg, stop):
      print("REC", json.dumps({"kind": stop.kind, "steps": len(dbg.log), "message": stop.message, "pc": stop.pc == dbg.target.pc()}))
    with md.session(postmortem="E_*", on_stop=at_stop):
      try: (a + 1).tolist()
      except Exception as e: print("REC", json.dumps({"error": f"{type(e).__name__}: {e}"}))
  """, env={"MOCKGPU_BUDGET": "5"}, check=False)
  stop = records(p)[0]
  assert stop["kind"] == "budget" and stop["steps"] == 5 and stop["pc"], stop
  assert "ran past MOCKGPU_BUDGET=5 wave-instructions on the debugger's stepper" in stop["message"]
  assert "MOCKGPU_BUDGET=5" in p.stdout + p.stderr

# *** in process: seeded random programs (tests/compiler/rdna/test_rdna_stepper.py's generator) on the RDNA adapter ***

def _random_dispatch(seed:int, lanes:int):
  """A random program over the VALU/SALU rows that loads its inputs and dumps its registers, as a dispatch: its memory,
  the Dispatch, and the dump buffer."""
  import struct
  from support.rdna_stepper import Gen, _kernel, _words, DUMP_ROWS
  from support.rdna_harness import aligned
  from support.rdna_isa import RSRC1, RSRC2
  from mockgpu.memory import AddressSpace
  from mockgpu.emulators.rdna import Dispatch
  body, inputs = _kernel(Gen(9000 + seed, lanes, c_only=False), 24)
  code = _words(*body)
  img = aligned(max(4096, len(code) + 256))
  img[:len(code)] = np.frombuffer(code, np.uint8)
  inp, out, args = aligned(inputs.nbytes, 256), aligned(4 * lanes * DUMP_ROWS, 256), aligned(256, 256)
  inp[:] = inputs.reshape(-1).view(np.uint8)
  struct.pack_into("<QQ", args, 0, out.ctypes.data, inp.ctypes.data)
  mem = AddressSpace("debug")
  for a in (img, args, inp, out): mem.map(a.ctypes.data, a.nbytes)
  user = [args.ctypes.data & 0xffffffff, args.ctypes.data >> 32] + [0] * 14
  return mem, Dispatch("rdna3", img.ctypes.data, RSRC1, RSRC2, 0, user, 0, 0, (lanes, 1, 1), (1, 1, 1), lanes == 32), \
         (img, args, inp, out)

@pytest.mark.parametrize("lanes", [32, 64])
@pytest.mark.parametrize("seed", range(3))
def test_reverse_step_on_random_programs(seed, lanes, monkeypatch):
  """Every step of a random program, undone and redone: the wave's registers and all of its memory equal those before
  and after the step, bit for bit; run to the end on the debugger, the dump equals the numpy path's."""
  from mockgpu.debug.amd import AMDTarget
  from mockgpu.debug.session import Session
  from mockgpu.emulators.rdna import run_dispatch
  monkeypatch.setenv("MOCKGPU_RDNA_NATIVE", "0")
  mem, d, arrays = _random_dispatch(seed, lanes)
  out = arrays[3]
  run_dispatch(mem, d)
  fast = out.copy()
  out[:] = 0
  def state(t):
    st = t.wave().state
    return [st.sgpr.copy(), st.vgpr.copy(), st.lds.copy(), np.array([st.pc, st.done])] + [a.copy() for a in arrays]
  same = lambda a, b: all(np.array_equal(x, y) for x, y in zip(a, b))
  checks = []
  def at_launch(dbg, stop):
    t = dbg.target
    while not t.done():
      before = state(t)
      dbg.step()
      after = state(t)
      dbg.reverse_step()
      checks.append(same(before, state(t)))
      dbg.step()
      checks.append(same(after, state(t)))
  s = Session(on_stop=at_launch)
  s.break_kernel("*")
  s.run(AMDTarget(mem, d, "random"))
  assert len(checks) > 2 * 40 and all(checks)
  assert out.tobytes() == fast.tobytes()

@pytest.mark.skipif(__import__("importlib").util.find_spec("mockgpu.debug.ptx_target") is None,
                    reason="the PTX adapter (mockgpu/debug/ptx_target.py) comes with the PTX stepper's branch")
def test_cli_on_mock_nv(tmp_path):
  """The same command line on MOCK+NV:PTX: a session attaches the PTX adapter; PTX source lines around the pc, a
  register by its PTX name as a lane table, reverse-step, and the program's result unchanged."""
  p = debug_cli(tmp_path, "--batch", "-ex", "break r_*", "-ex", "step 10", "-ex", "where", "-ex", "reverse-step 2", "-ex", "continue",
                env={"DEV": "MOCK+NV:PTX"})
  assert p.returncode == 0, p.stderr[-3000:]
  out = p.stdout
  assert "stopped: launch of r_" in out and "[ptx]: CTA 0 warp 0 of" in out and "PTX line" in out
  assert "10 instructions\n" in out and "2 instructions undone" in out
  assert f"RESULT {float((np.arange(64).reshape(8, 8) @ np.full((8, 8), 2)).sum())}" in out
