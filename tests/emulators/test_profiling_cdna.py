"""CDNA (gfx942, gfx950) thread traces through tinygrad (VIZ=-2 / SQTT=1 in child processes): the gfx9 trace registers
per XCC (PRED_EXEC) and SE, tinygrad's CDNA packets decoded by its own decoder, exact instruction tokens per traced wave,
determinism, buffer overflow and the timing model against the MI350X capture; and the registers' strictness in process."""
import re
import pytest
import machines
from mockgpu.errors import PacketError, Unmodelled
from support.kfd_client import Client
from conftest import run_tinygrad
from support.profiling import result, STREAM_WORKLOAD

def cli(paths:list, *args) -> str:
  return run_tinygrad("MOCK+AMD", f"import sys; sys.argv = ['cli', *{list(args)!r}, *{paths!r}]; import runpy; "
                                  f"runpy.run_module('tinygrad.viz.cli', run_name='__main__')").stdout

@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_cdna_viz2_end_to_end(arch, tmp_path):
  # one counter event and one trace per SE of every XCC (8 x 4), each trace starting with tinygrad's gfx9 header and
  # decoding as CDNA; VIZ's command line lists the kernel's PMC and SE:0/SE:1 packet views and prints them
  p = run_tinygrad(f"MOCK+AMD:LLVM:{arch}", """
    import numpy as np
    from tinygrad import Tensor, Device
    from tinygrad.device import Compiled
    from tinygrad.renderer.amd import sqtt as tg
    x = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    ok = np.array_equal((Tensor(x) + 1).numpy(), x + np.float32(1))
    Device["AMD"].synchronize()
    evs = [e for e in Compiled.profile_events if type(e).__name__ in ("ProfilePMCEvent", "ProfileSQTTEvent")]
    sq = [e for e in evs if type(e).__name__ == "ProfileSQTTEvent"]
    cdna = all(any(isinstance(p, tg.CDNA_TIMESTAMP) for p in tg.decode(e.blob)) for e in sq)
    insts = sum(isinstance(p, tg.CDNA_INST) for e in sq if e.se == 0 for p in tg.decode(e.blob))
    kerns = sorted({e.kern for e in evs})
    print('RESULT', ok, cdna, insts > 5, [(sum(type(e).__name__ == "ProfilePMCEvent" for e in evs if e.kern == k),
                sorted(e.se for e in sq if e.kern == k)) for k in kerns])
  """, env={"VIZ": "-2", "TMPDIR": str(tmp_path)})
  assert result(p) == f"True True True [(1, {list(range(32))})]", p.stdout[-3000:]
  pkl = lambda name: [str(f) for f in tmp_path.glob(f"{name}.pkl*")]
  paths = ["--profile-path", *pkl("profile"), "--rewrites-path", *pkl("rewrites")]
  plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in cli(paths, "--ls").splitlines()]
  kernel = next(line for line in plain if line.endswith(" PMC")).removesuffix(" PMC")
  assert f"{kernel} SQTT SE:1 PKTS" in plain, plain
  for view, needle in ((f"{kernel} PMC", "VALU utilization"), (f"{kernel} SQTT SE:0 PKTS", "CDNA_WAVEEND")):
    out = cli(paths, "-s", view)
    assert needle in out and "OTHER_MSG" in out if "PKTS" in view else needle in out, out[-3000:]

STREAMS = """
import collections, numpy as np
from tinygrad import Tensor, Device
from tinygrad.device import Compiled
from tinygrad.renderer.amd import sqtt as tg
from mockgpu import events
from mockgpu.emulators.rdna import executor
from mockgpu.compiler.rdna import decode
def kind(name, size, taken):  # the INST op the MI350X captures show per instruction (None: an ISSUE token alone)
  if name in ("S_WAITCNT", "S_NOP"): return None
  if name == "S_ENDPGM": return "OTHER_MSG"
  if "BRANCH" in name: return "JUMP" if taken else "NEXT"
  if name.startswith(("S_LOAD", "S_BUFFER_LOAD")): return "SMEM_RD"
  if name.startswith(("GLOBAL_LOAD", "FLAT_LOAD")): return "FLAT_RD"
  if name.startswith(("GLOBAL_STORE", "FLAT_STORE")): return "FLAT_WR"
  if name.startswith("DS_"): return "LDS"
  if name.startswith("V_"): return "VALU_64" if size == 8 else "VALU_32"
  return ("SALU_64" if size == 8 else "SALU_32") if name.startswith("S_") else "?" + name
expected = collections.defaultdict(list)  # pgm -> per wave of the dispatch, the reference stepper's (ops, immediates)
def hook(mem, d):
  wpg, first = -(-d.block[0] * d.block[1] * d.block[2] // d.wave_size), None
  for wg in d.workgroup_ids():
    for w in range(wpg):
      s = first = executor.stepper(mem, d, int(wg), w, like=first)
      ops, imm = [], 0
      while not s.done:
        inst, pc = s.instruction(), s.pc
        s.step()
        k = kind(decode.op_name(inst), inst.size(), not s.done and s.pc != pc + inst.size())
        if k is None: imm += 1
        else: ops.append(k)
      expected[d.pgm_addr].append((tuple(ops), imm))
  return None
""" + STREAM_WORKLOAD + """events.unintercept("rdna_dispatch", hook)
by_name = {o.name: o.prog_addr for o in __import__("gc").get_objects() if type(o).__name__ == "AMDProgram"}
prg = {e.tag: e for e in Compiled.profile_events if type(e).__name__ == "ProfileProgramEvent"}
exact, traced, ops = True, 0, collections.Counter()
for e in Compiled.profile_events:
  if type(e).__name__ != "ProfileSQTTEvent" or not e.itrace: continue
  cur, waves = {}, []
  for p in tg.decode(e.blob):
    if isinstance(p, tg.CDNA_WAVESTART): cur[(p.simd, p.wave)] = ([], [0])
    elif isinstance(p, tg.CDNA_ISSUE):
      for w in range(10):
        if getattr(p, f"inst{w}") == 3: cur[(p.simd, w)][1][0] += 1
    elif isinstance(p, tg.CDNA_INST):
      cur[(p.simd, p.wave)][0].append(p.op.name)
      ops[p.op.name] += 1
    elif isinstance(p, tg.CDNA_WAVEEND):
      got, imm = cur.pop((p.simd, p.wave))
      waves.append((tuple(got), imm[0]))
  exact &= not (collections.Counter(waves) - collections.Counter(expected[by_name[prg[e.kern].name]])) and not cur
  traced += len(waves)
print("RESULT", ok, exact, traced > 0, ops["JUMP"] > 0, ops["NEXT"] > 0, len(expected))
"""

def test_cdna_instruction_tokens_are_the_executors_streams(tmp_path):
  # a matmul (a loop: JUMP taken, NEXT at its exit) and a sum (LDS, a bounds branch): every wave traced on the itrace
  # SEs (SE 0 and 1 of XCC 0), read back with tinygrad's CDNA decoder, is a wave the reference stepper ran, instruction
  # token for instruction token (and one ISSUE-only token per s_waitcnt / s_nop); every WAVESTART has its WAVEEND
  p = run_tinygrad("MOCK+AMD:LLVM:gfx942", STREAMS, env={"SQTT": "1", "PROFILE": "1", "SQTT_BUFFER_SIZE": "1",
                                                          "TMPDIR": str(tmp_path)}, timeout=600)
  assert result(p) == "True True True True True 2", p.stdout[-3000:]

DIGEST = """
import hashlib, numpy as np
from tinygrad import Tensor, Device
from tinygrad.device import Compiled
a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
(Tensor(a) @ Tensor(a)).realize()
Device["AMD"].synchronize()
blobs = [e.blob for e in Compiled.profile_events if type(e).__name__ == "ProfileSQTTEvent"]
print("RESULT", len(blobs), hashlib.sha256(b"".join(blobs)).hexdigest())
"""

def test_cdna_two_runs_give_identical_traces(tmp_path):
  env = {"SQTT": "1", "PROFILE": "1", "SQTT_BUFFER_SIZE": "1", "TMPDIR": str(tmp_path)}
  outs = [result(run_tinygrad("MOCK+AMD:LLVM:gfx950", DIGEST, env=env)) for _ in range(2)]
  assert outs[0] == outs[1] and outs[0].startswith("32 "), outs  # the matmul's 32 SEs (8 XCCs x 4)

OVERFLOW = """
import numpy as np
from tinygrad import Tensor, Device
from tinygrad.device import Compiled, BufferSpec
from tinygrad.renderer.amd import sqtt as tg
d = Device["AMD"]
# 4 KiB trace buffers instead of SQTT_BUFFER_SIZE's whole MiBs: the runtime programs SQ_THREAD_TRACE_SIZE from them
d.sqtt_buffers = [d.allocator.alloc(0x1000, BufferSpec(nolru=True, uncached=True)) for _ in d.sqtt_buffers]
x = np.arange(1 << 22, dtype=np.float32)
ok = np.allclose((Tensor(x) * 2 + 1).numpy(), x * 2 + 1)
d.synchronize()
se0 = [e for e in Compiled.profile_events if type(e).__name__ == "ProfileSQTTEvent" and e.se == 0][-1]
pkts = list(tg.decode(se0.blob))
print("RESULT", ok, len(se0.blob), sum(isinstance(p, tg.CDNA_INST) for p in pkts) > 100)
"""

def test_cdna_small_buffer_overflows_as_hardware_does(tmp_path):
  # 4M elements put many waves on XCC 0 / SE 0 / CU 0: their trace outgrows a 4 KiB buffer, which stops at its
  # last 32 bytes; tinygrad warns that the buffer is full, and the cut trace (its 8-byte header, then 4064 bytes) decodes
  p = run_tinygrad("MOCK+AMD:LLVM:gfx942", OVERFLOW, env={"SQTT": "1", "PROFILE": "1", "TMPDIR": str(tmp_path)})
  assert result(p) == "True 4072 True", p.stdout[-2000:]
  assert "SQTT buffer is full (SE 0)" in p.stdout

# per-wave gaps (cycles) between consecutive tokens of one wave (INST ops by class; "wait": an ISSUE code 3, s_waitcnt
# or s_nop), medians over the 8 traced waves of tinygrad's two MI350X captures of the 32x32 gemm r_32_32_16_2 (its
# extra/sqtt/examples gfx950, CU 0 of SE 0). valu>wait and salu>wait are left out: that build spreads three s_waitcnt
# through the v_add chain and waits on LDS alone, this LLVM's one waits on an s_load it moved after the ds_reads
CAPTURED_MEDIANS = {"branch>valu": 4, "lds>lds": 4, "lds>salu": 8, "lds>wait": 40, "salu>branch": 4, "salu>salu": 4, "salu>valu": 0,
                    "salu>vmem_st": 4, "smem>salu": 4, "smem>smem": 4, "valu>lds": 12, "valu>salu": 4, "valu>valu": 4,
                    "valu>vmem_ld": 10, "vmem_ld>valu": 16, "vmem_ld>vmem_ld": 4, "vmem_st>end": 238, "wait>salu": 8, "wait>valu": 4}
CAPTURED_PACKETS = {"CDNA_MISC", "CDNA_TIMESTAMP", "CDNA_WAVESTART", "CDNA_ISSUE", "CDNA_INST", "CDNA_WAVEEND"}  # REG* aside
CALIBRATE = """
import collections, statistics, numpy as np
from tinygrad import Tensor, Device
from tinygrad.device import Compiled
from tinygrad.renderer.amd import sqtt as tg
K = {"VALU_32": "valu", "VALU_64": "valu", "VALU_MAI": "valu", "SALU_32": "salu", "SALU_64": "salu", "SMEM_RD": "smem", "FLAT_RD": "vmem_ld",
     "FLAT_WR": "vmem_st", "VMEM_RD": "vmem_ld", "VMEM_WR": "vmem_st", "LDS": "lds", "NEXT": "branch", "JUMP": "branch", "OTHER_MSG": "end"}
a = np.random.default_rng(11).standard_normal((32, 32)).astype(np.float32)
(Tensor(a) @ Tensor(a)).realize()
Device["AMD"].synchronize()
name = {e.tag: e.name for e in Compiled.profile_events if type(e).__name__ == "ProfileProgramEvent"}
gaps, kinds = collections.defaultdict(list), set()
for e in Compiled.profile_events:
  if type(e).__name__ != "ProfileSQTTEvent" or not e.itrace or name[e.kern] != "r_32_32_16_2": continue
  last = {}
  for p in tg.decode(e.blob):
    kinds.add(type(p).__name__)
    evs = [((p.simd, p.wave), K[p.op.name])] if isinstance(p, tg.CDNA_INST) else \\
          [((p.simd, w), "wait") for w in range(10) if getattr(p, f"inst{w}") == 3] if isinstance(p, tg.CDNA_ISSUE) else []
    for key, k in evs:
      if key in last: gaps[f"{last[key][0]}>{k}"].append(p._time - last[key][1])
      last[key] = (k, p._time)
      if k == "end": del last[key]
print("RESULT", sorted(kinds - {"LAYOUT_HEADER"}), {k: statistics.median(v) for k, v in gaps.items()})
"""

def test_cdna_calibration_gap_medians(tmp_path):
  # the timing model against the capture: the same kernel (tinygrad's 32x32 gemm, r_32_32_16_2) on the mock MI350X; the
  # median gap of each class pair both have lies within 30% of the captured one, with the capture's packet types
  p = run_tinygrad("MOCK+AMD:LLVM:gfx950", CALIBRATE, env={"SQTT": "1", "PROFILE": "1", "SQTT_BUFFER_SIZE": "1", "TMPDIR": str(tmp_path)})
  line = result(p)
  kinds, got = eval(line[:line.index("]") + 1]), eval(line[line.index("]") + 2:])
  assert set(kinds) == CAPTURED_PACKETS, kinds
  both = [k for k in CAPTURED_MEDIANS if k in got]
  assert len(both) >= 15, (both, got)
  off = {k: (got[k], CAPTURED_MEDIANS[k]) for k in both if abs(got[k] - CAPTURED_MEDIANS[k]) > 0.3 * CAPTURED_MEDIANS[k]}
  assert not off, off

def test_cdna_encoder_times_and_overflow():
  # the encoder's clock as tinygrad's decoder reads it back: 4-cycle CDNA_MISC deltas (floored to that resolution), an
  # absolute CDNA_TIMESTAMP past 1020 cycles; a buffer too small stops at its limit and still decodes
  from tinygrad.renderer.amd import sqtt as tg
  from mockgpu.emulators.amd import sqtt, sqtt_cdna
  unit = sqtt.Unit(rdna4=False, t0=0, simd=1, slots=8, timing=sqtt_cdna.TIMING)
  times = [16, 21, 1000, 1000, 5000, 300_000]
  for i, t in enumerate(times): unit.emit(t, "CDNA_INST", wave=i % 8, simd=1, op=tg.InstOpCDNA.VALU_32)
  blob, full = sqtt_cdna.encode(unit, 1 << 20)
  header = (0x11 | (4 << 13) | (0xf << 16)).to_bytes(8, "little")  # what tinygrad prepends on gfx9
  insts = [p for p in tg.decode(header + blob) if isinstance(p, tg.CDNA_INST)]
  assert not full and len(blob) % 32 == 0 and [p._time for p in insts] == [t - t % 4 for t in times]
  assert [p.wave for p in insts] == [0, 1, 2, 3, 4, 5] and {p.simd for p in insts} == {1}
  small, full = sqtt_cdna.encode(unit, 32)
  cut = [p._time for p in tg.decode(header + small) if isinstance(p, tg.CDNA_INST)]
  assert full and len(small) == 32 and 0 < len(cut) < len(times) and cut == [t - t % 4 for t in times[:len(cut)]]

# *** the gfx9 trace registers, in process ***

@pytest.fixture
def perf(monkeypatch):
  monkeypatch.setattr(machines, "current", None)
  monkeypatch.delenv("DEV", raising=False)
  monkeypatch.setenv("MOCKGPU_AMD_BOARD", "gfx942")
  monkeypatch.setenv("MOCKGPU_COUNT", "1")
  c = Client()
  gc = c.gpu.gc
  return c, c.gpu.perf, gc, gc.regGRBM_GFX_INDEX.encode(se_broadcast_writes=1, sh_broadcast_writes=1, instance_broadcast_writes=1)

def start(c, perf, gc, grbm, size_pages=1, **mode):
  buf = c.alloc(0x1000 * max(size_pages, 1))
  for name, value in (("MASK", gc.regSQ_THREAD_TRACE_MASK.encode(simd_en=0xf)), ("TOKEN_MASK2", 0xffffffff),
                      ("TOKEN_MASK", gc.regSQ_THREAD_TRACE_TOKEN_MASK.encode(token_mask=0xffff)), ("BASE", (buf.va >> 12) & 0xffffffff),
                      ("BASE2", buf.va >> 44), ("SIZE", size_pages)):
    perf.write(0, f"SQ_THREAD_TRACE_{name}", value, grbm)
  perf.write(0, "SQ_THREAD_TRACE_MODE", gc.regSQ_THREAD_TRACE_MODE.encode(mask_cs=1, mode=1, **mode), grbm)
  return buf

def test_gfx9_trace_start_stop_status_wptr(perf):
  # MODE mode 1 starts every SE (broadcast), STATUS.busy reads 1 (also at the UCONFIG offset tinygrad's sqtt_stop waits
  # on), mode 0 writes each SE's trace (empty of waves: the anchor timestamp) and WPTR counts its 32-byte units
  c, p, gc, grbm = perf
  buf = start(c, p, gc, grbm)
  se1 = gc.regGRBM_GFX_INDEX.encode(se_index=1, instance_broadcast_writes=1)
  assert gc.regSQ_THREAD_TRACE_STATUS.decode(p.read(0, "SQ_THREAD_TRACE_STATUS", se1))["busy"] == 1
  assert p.owns(gc.regSQ_THREAD_TRACE_STATUS.addr[0] - 0xc000) == "SQ_THREAD_TRACE_STATUS"
  p.write(0, "SQ_THREAD_TRACE_MODE", gc.regSQ_THREAD_TRACE_MODE.encode(mask_cs=1, mode=0), grbm)
  assert gc.regSQ_THREAD_TRACE_STATUS.decode(p.read(0, "SQ_THREAD_TRACE_STATUS", se1))["busy"] == 0
  assert p.read(0, "SQ_THREAD_TRACE_WPTR", se1) == 1 and buf.u32()[0] == 1  # one 32-byte unit; CDNA_TIMESTAMP first

def test_gfx9_trace_registers_are_strict(perf):
  c, p, gc, grbm = perf
  with pytest.raises(Unmodelled, match="SQ_THREAD_TRACE_MODE wrap 1 .SE 0. is not modelled"):
    start(c, p, gc, grbm, wrap=1)
  p.write(0, "SQ_THREAD_TRACE_TOKEN_MASK2", 0xff, grbm)
  with pytest.raises(Unmodelled, match="TOKEN_MASK2 inst_mask 0xff .SE 0.: masking instruction types is not modelled"):
    p.write(0, "SQ_THREAD_TRACE_MODE", gc.regSQ_THREAD_TRACE_MODE.encode(mask_cs=1, mode=1), grbm)
  with pytest.raises(PacketError, match="SQ_THREAD_TRACE_MODE mode 1 on SE 0 with a SIZE of 0"):
    start(c, p, gc, grbm, size_pages=0)
  with pytest.raises(Unmodelled, match="THREAD_TRACE_FINISH on gfx9 is not modelled"):
    p.event(0, "THREAD_TRACE_FINISH")
