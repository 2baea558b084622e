"""NVIDIA PMA: the RM profiler object (MAXWELL_PROFILER_DEVICE) and its controls, the PMA stream, PMA=1 end to end.

tinygrad runs in a subprocess (DEV must be set before it is imported), as in test_nv_tinygrad.py.
"""
import ctypes, enum, json, pickle, subprocess, sys, types
from dataclasses import dataclass
import pytest
from conftest import run_tinygrad
from mockgpu.boards import nv_board
from mockgpu.emulators.nv_pma import Stream, StreamError, PACKET

def run(code:str, dev="MOCK+NV", timeout=240, **env) -> subprocess.CompletedProcess:
  return run_tinygrad(dev, code, timeout, {"HCQDEV_WAIT_TIMEOUT_MS": "300", **env})

def result(r:subprocess.CompletedProcess): return json.loads(next(l for l in r.stdout.splitlines() if l.startswith("{")))

# *** the stream alone ***

def test_stream_wraps_and_overflows_as_the_pma_does():
  ring, membytes = ctypes.create_string_buffer(4 * PACKET), ctypes.c_uint64(7)
  s = Stream(ctypes.addressof(ring), 4 * PACKET, ctypes.addressof(membytes))
  s.write(bytes([1]) * PACKET * 3)
  assert (s.put, s.update_membytes(), membytes.value) == (3 * PACKET, 3 * PACKET, 3 * PACKET)
  s.bump(2 * PACKET)
  s.write(bytes([2]) * PACKET * 2)       # wraps: the second packet lands at the ring's start
  assert s.put == PACKET and ring.raw[:PACKET] == bytes([2]) * PACKET and ring.raw[3 * PACKET:] == bytes([2]) * PACKET
  s.write(bytes([3]) * PACKET * 2)       # one fits (4 of 4 used), the next is dropped and the overflow latched
  assert s.unread == 4 * PACKET and s.overflow and s.dropped == PACKET and ring.raw[PACKET:2 * PACKET] == bytes([3]) * PACKET
  s.bump(4 * PACKET)
  s.write(bytes([4]) * PACKET)           # overflow stays: nothing more is written until the stream is freed
  assert s.unread == 0 and s.overflow and s.dropped == 2 * PACKET
  with pytest.raises(StreamError, match="bytesConsumed 32 is more than the 0 bytes available"): s.bump(PACKET)

# *** the sampling model alone ***

def test_sm_model_samples_issue_and_waits():
  """One warp of 3 instructions (ALU, global load, ALU), sampled every cycle: it issues at 0, waits 4 (exec), issues the
  load at 4, waits 400 (memory), issues the last at 404. Then two warps of one CTA meeting at a barrier."""
  from mockgpu.emulators.nv_pma import SM, STALL
  code = [(0, [(4, "EXEC_DEPENDENCY"), (400, "MEMORY_DEPENDENCY"), (4, "EXEC_DEPENDENCY")])]
  m = SM(code, [[0]], [0], 1, 4, 1)
  m.run()
  want = [(0, 0, STALL["NONE"])] + [(t, 1, STALL["EXEC_DEPENDENCY"]) for t in range(1, 4)] + [(4, 1, STALL["NONE"])]
  want += [(t, 2, STALL["MEMORY_DEPENDENCY"]) for t in range(5, 404)] + [(404, 2, STALL["NONE"])]
  assert [(t, pc, key) for t, pc, key, _ in m.samples] == want
  # warp 1 runs a long load before the barrier (block 0: load; block 1: bar.sync, ALU): warp 0 waits at the barrier
  code = [(0, [(400, "MEMORY_DEPENDENCY")]), (1, [(-1, "SYNC"), (4, "EXEC_DEPENDENCY")])]
  m = SM(code, [[1], [0, 1]], [0], 2, 2, 1)
  m.run()
  by_t = {t: (pc, key, wave) for t, pc, key, wave in m.samples}
  assert by_t[0] == (1, STALL["NONE"], 0) and by_t[1] == (0, STALL["NONE"], 1)   # warp 0 reaches bar.sync, warp 1 loads
  assert by_t[2] == (2, STALL["SYNC"], 0)                                          # warp 0 waits for warp 1 at the barrier
  # at 401 warp 1 issues bar.sync, but the pointer is at warp 0, still waiting; then both go on, one cycle each
  assert by_t[401] == (2, STALL["SYNC"], 0) and by_t[402] == (2, STALL["NONE"], 0) and by_t[403] == (2, STALL["NONE"], 1)
  assert max(by_t) == 403

def test_packets_split_records_per_sm():
  """Records of two SMs, interleaved in time, become per-SM payload streams cut at 28 bytes (a record may straddle two
  packets); the decoder below reassembles every record."""
  from mockgpu.emulators.nv_pma import packets
  samples = [(t, t % 2, [0x21, 0x142][t % 2], t, [3, 7, 9, 18][t % 4], t % 48) for t in range(20)]
  for size in (8, 9):
    blob = packets(samples, size)
    got = sorted((tpc, s.pc_offset >> 4, int(s.stall_reason), s.wave_id) for s, tpc in decode(blob, 0xa04 if size == 9 else 0x809))
    assert got == sorted((ident, pc, key, wave) for _, _, ident, pc, key, wave in samples)
    assert len(blob) == 32 * sum(-(-10 * size // 28) for _ in range(2))

# *** the RM object and its controls ***

def test_profiler_controls_refuse_malformed_use_then_work():
  """Each malformed control gives its NV status (and a log line naming the culprit), followed by the well-formed call."""
  r = run("""
    import ctypes, json, logging
    logging.basicConfig(level=logging.INFO)
    from tinygrad import Tensor, Device
    from tinygrad.runtime.autogen import nv_570 as nv
    d = Device["NV"]
    i, out = d.iface, {}
    def ctl(obj, cmd, p=None):
      try: i.rm_control(obj, cmd, p); return "ok"
      except RuntimeError as e: return str(e).split(": ")[-1]
    def step(name, bad, good): out[name] = [bad(), good()]
    prof = i.rm_alloc(d.subdevice, nv.MAXWELL_PROFILER_DEVICE, nv.NVB2CC_ALLOC_PARAMETERS(hClientTarget=i.root, hContextTarget=d.channel_group))
    try: i.rm_alloc(d.nvdevice, nv.MAXWELL_PROFILER_DEVICE, nv.NVB2CC_ALLOC_PARAMETERS(hClientTarget=i.root))
    except RuntimeError as e: out["parent"] = str(e).split(": ")[-1]
    try: i.rm_alloc(d.subdevice, nv.MAXWELL_PROFILER_DEVICE, nv.NVB2CC_ALLOC_PARAMETERS(hClientTarget=i.root, hContextTarget=0xdead))
    except RuntimeError as e: out["context"] = str(e).split(": ")[-1]
    P = nv.struct_NVB0CC_CTRL_POWER_REQUEST_FEATURES_PARAMS
    step("power", lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_POWER_REQUEST_FEATURES, P(controlMask=3)),
                  lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_POWER_REQUEST_FEATURES, P(controlMask=1 | 1 << 2)))
    GP = nv.struct_NVB0CC_CTRL_PMA_STREAM_UPDATE_GET_PUT_PARAMS
    out["getput_no_stream"] = ctl(prof, nv.NVB0CC_CTRL_CMD_PMA_STREAM_UPDATE_GET_PUT, GP(bUpdateAvailableBytes=1))
    out["bind_nothing"] = ctl(prof, nv.NVB0CC_CTRL_CMD_BIND_PM_RESOURCES)
    R = nv.struct_NVB0CC_CTRL_EXEC_REG_OPS_PARAMS
    def regops(*ops, mode=0, count=None):
      p = R(regOpCount=len(ops) if count is None else count, mode=mode)
      for j, (op, off, val) in enumerate(ops):
        p.regOps[j] = nv.struct_NV2080_CTRL_GPU_REG_OP(regOp=op, regOffset=off, regValueLo=val, regAndNMaskLo=0xffffffff)
      return p, ctl(prof, nv.NVB0CC_CTRL_CMD_EXEC_REG_OPS, p)
    W, RD, GOOD, BAD = nv.NV2080_CTRL_GPU_REG_OP_WRITE_32, nv.NV2080_CTRL_GPU_REG_OP_READ_32, 0x24a000 + 0x620, 0x100
    out["regops_unreserved"] = regops((W, GOOD, 5))[1]
    buf, avail = d.iface.alloc(1 << 20, uncached=True, cpu_access=True), d.iface.alloc(0x1000, uncached=True)
    A = nv.struct_NVB0CC_CTRL_ALLOC_PMA_STREAM_PARAMS
    good_stream = lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_ALLOC_PMA_STREAM, A(hMemPmaBuffer=buf.meta.hMemory, pmaBufferSize=buf.size,
                                                                           hMemPmaBytesAvailable=avail.meta.hMemory))
    out["stream_handle"] = ctl(prof, nv.NVB0CC_CTRL_CMD_ALLOC_PMA_STREAM, A(hMemPmaBuffer=0xdead, pmaBufferSize=0x1000,
                                                                            hMemPmaBytesAvailable=avail.meta.hMemory))
    step("stream_size", lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_ALLOC_PMA_STREAM, A(hMemPmaBuffer=buf.meta.hMemory, pmaBufferSize=buf.size + 0x1000,
                                                                                 hMemPmaBytesAvailable=avail.meta.hMemory)), good_stream)
    out["stream_twice"] = good_stream()
    HW = nv.struct_NVB0CC_CTRL_RESERVE_HWPM_LEGACY_PARAMS
    step("hwpm", lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_RESERVE_PM_AREA_PC_SAMPLER, HW()),
                 lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_RESERVE_HWPM_LEGACY, HW()))
    other = i.rm_alloc(d.subdevice, nv.MAXWELL_PROFILER_DEVICE, nv.NVB2CC_ALLOC_PARAMETERS(hClientTarget=i.root))
    step("hwpm_other", lambda: ctl(other, nv.NVB0CC_CTRL_CMD_RESERVE_HWPM_LEGACY, HW()),
                       lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_RESERVE_PM_AREA_PC_SAMPLER))
    step("bind", lambda: ctl(other, nv.NVB0CC_CTRL_CMD_BIND_PM_RESOURCES), lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_BIND_PM_RESOURCES))
    out["bind_twice"] = ctl(prof, nv.NVB0CC_CTRL_CMD_BIND_PM_RESOURCES)
    H = nv.struct_NVB0CC_CTRL_HS_CREDITS_PARAMS
    hs = H(numEntries=2)
    hs.creditInfo[0] = nv.struct_NVB0CC_CTRL_PMA_STREAM_HS_CREDITS_INFO(chipletType=nv.NVB0CC_CHIPLET_TYPE_GPC, chipletIndex=0, numCredits=6)
    hs.creditInfo[1] = nv.struct_NVB0CC_CTRL_PMA_STREAM_HS_CREDITS_INFO(chipletType=nv.NVB0CC_CHIPLET_TYPE_GPC, chipletIndex=d.num_gpcs, numCredits=6)
    out["credits"] = [ctl(prof, nv.NVB0CC_CTRL_CMD_SET_HS_CREDITS, hs), hs.statusInfo.status, hs.statusInfo.entryIndex]
    hs.numEntries = 1
    out["credits"].append(ctl(prof, nv.NVB0CC_CTRL_CMD_SET_HS_CREDITS, hs))
    out["regops_count"] = regops((W, GOOD, 5), count=125)[1]
    p, st = regops((W, GOOD, 5), (W, BAD, 1))
    out["regops_all_or_none"] = [st, p.regOps[1].regStatus, p.bPassed, regops((RD, GOOD, 0))[0].regOps[0].regValueLo]
    p, st = regops((W, GOOD, 6), (W, BAD, 1), (nv.NV2080_CTRL_GPU_REG_OP_WRITE_64, GOOD, 1), mode=1)
    out["regops_continue"] = [st, p.bPassed, [p.regOps[j].regStatus for j in range(3)], regops((RD, GOOD, 0))[0].regOps[0].regValueLo]
    step("getput", lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_PMA_STREAM_UPDATE_GET_PUT, GP(bytesConsumed=32)),
                   lambda: ctl(prof, nv.NVB0CC_CTRL_CMD_PMA_STREAM_UPDATE_GET_PUT, GP(bUpdateAvailableBytes=1, bWait=1)))
    out["getput_wait"] = ctl(prof, nv.NVB0CC_CTRL_CMD_PMA_STREAM_UPDATE_GET_PUT, GP(bWait=1))
    # freeing the profiler releases its reservations and unbinds the GPU's PM: the other profiler may reserve now
    from tinygrad.runtime.ops_nv import nv_iowr
    nv_iowr(i.fd_ctl, nv.NV_ESC_RM_FREE, made:=nv.NVOS00_PARAMETERS(hRoot=i.root, hObjectParent=d.subdevice, hObjectOld=prof))
    from mockgpu import bridge
    out["freed"] = [made.status, ctl(other, nv.NVB0CC_CTRL_CMD_RESERVE_HWPM_LEGACY, HW()), bridge.machine().devices["nv"][0].pm is None]
    out["after"] = (Tensor([1., 2.]) * 3).tolist()
    print(json.dumps(out))
  """)
  got = result(r)
  assert got["parent"] == "NV_ERR_INVALID_OBJECT_PARENT" and got["context"] == "NV_ERR_INVALID_OBJECT_HANDLE"
  assert got["power"] == ["NV_ERR_INVALID_ARGUMENT", "ok"]
  assert got["getput_no_stream"] == "NV_ERR_INVALID_ARGUMENT" and got["bind_nothing"] == "NV_ERR_INVALID_STATE"
  assert got["regops_unreserved"] == "NV_ERR_INVALID_STATE"
  assert got["stream_handle"] == "NV_ERR_INVALID_OBJECT_HANDLE" and got["stream_size"] == ["NV_ERR_INVALID_LIMIT", "ok"]
  assert got["stream_twice"] == "NV_ERR_STATE_IN_USE"
  assert got["hwpm"] == ["NV_ERR_INVALID_PARAM_STRUCT", "ok"]   # the PC-sampler reservation takes no parameters
  assert got["hwpm_other"] == ["NV_ERR_STATE_IN_USE", "ok"]
  assert got["bind"] == ["NV_ERR_INVALID_STATE", "ok"] and got["bind_twice"] == "NV_ERR_INVALID_STATE"
  assert got["credits"] == ["NV_ERR_INVALID_ARGUMENT", 2, 1, "ok"]  # INVALID_CHIPLET at entry 1
  assert got["regops_count"] == "NV_ERR_INVALID_ARGUMENT"
  assert got["regops_all_or_none"] == ["NV_ERR_INVALID_ARGUMENT", 4, False, 0]    # INVALID_OFFSET; the good write not applied
  assert got["regops_continue"] == ["ok", False, [0, 4, 8], 6]                     # the good write applied; 64-bit unsupported
  assert got["getput"] == ["NV_ERR_INVALID_ARGUMENT", "ok"] and got["getput_wait"] == "NV_ERR_INVALID_ARGUMENT"
  assert got["freed"] == [0, "ok", True] and got["after"] == [3.0, 6.0]
  for msg in ("MAXWELL_PROFILER_DEVICE needs a Subdevice parent", "POWER_REQUEST_FEATURES: ELCG request 3",
              "ALLOC_PMA_STREAM: 0x0+0x101000 past the buffer's 0x100000 bytes", "RESERVE_HWPM_LEGACY: reserved by profiler 0x",
              "SET_HS_CREDITS: entry 1: chiplet type 2 index", "EXEC_REG_OPS: op 1 (op 1, type 0) at 0x100: status 4; 1 of 2 refused, none applied",
              "PMA_STREAM_UPDATE_GET_PUT: bytesConsumed 32 is more than the 0 bytes available", "BIND_PM_RESOURCES: nothing is reserved"):
    assert msg in r.stderr, msg

@pytest.mark.parametrize("arch", ["sm_86", "sm_89", "sm_120"])
def test_pma_device_open_programs_the_sampler(arch, tmp_path):
  """PMA=1 opens the device on each board: every reg op tinygrad sends lands in a PM window (none refused)."""
  b = nv_board(arch)
  r = run("""
    import json
    from tinygrad import Tensor, Device
    d = Device["NV"]
    from mockgpu import bridge
    y = (Tensor([1., 2., 3.]) + 1).tolist()
    pm = bridge.machine().devices["nv"][0].pm
    print(json.dumps({"y": y, "enabled": d.pma_enabled, "regs": len(pm.regs), "sampling": pm.sampling()}))
  """, dev=f"MOCK+NV:PTX:{arch}", VIZ="-1", PMA="1", TMPDIR=str(tmp_path))
  got = result(r)
  sms = b.gpcs * b.tpc_per_gpc * b.sm_per_tpc
  # per SM 8 registers (9 on Blackwell), plus the GPC/PMA enables tinygrad writes for the board
  per_sm = 9 if arch == "sm_120" else 8
  assert got["y"] == [2.0, 3.0, 4.0] and got["enabled"] and got["sampling"]
  assert got["regs"] > sms * per_sm and "not modelled" not in r.stderr

# *** PC sampling end to end ***
# The decoder below is written from the record layout mockgpu documents (README "NVIDIA PC sampling"): tinygrad's own
# decoder (extra/nv_pma/decode.py) is in its source tree only, not in the 0.14.0 wheel or sdist, so it cannot be imported here.

class StallReason(enum.IntEnum):
  SYNC, EXEC_DEPENDENCY, MEMORY_DEPENDENCY, NONE = 3, 7, 9, 18

@dataclass
class Sample:
  pc_offset: int
  stall_reason: StallReason
  wave_id: int
  active: int

LAYOUT = {8: {"pc": (0, 32), "stall": (32, 5), "wave": (40, 6), "active": (48, 1)},
          9: {"pc": (0, 40), "stall": (40, 6), "wave": (48, 6), "active": (56, 1)}}

def decode_tpc_id(tpc_id:int) -> tuple[int, int, int]: return tpc_id >> 5, (tpc_id >> 1) & 0xf, tpc_id & 1

def decode(blob:bytes, sm_version:int):
  size = 9 if sm_version >= 0xa04 else 8
  assert len(blob) % 32 == 0, len(blob)
  bufs:dict[int, bytearray] = {}
  for off in range(0, len(blob), 32):
    hdr = int.from_bytes(blob[off + 4:off + 8], "little")
    num_bytes, tpc_id, dropped = hdr & 0xff, (hdr >> 8) & 0xfff, hdr >> 31
    assert num_bytes <= 28 and not dropped
    buf = bufs.setdefault(tpc_id, bytearray())
    buf += (blob[off:off + 4] + blob[off + 8:off + 32])[:num_bytes]
    while len(buf) >= size:
      v = int.from_bytes(buf[:size], "little")
      del buf[:size]
      f = {k: (v >> lo) & ((1 << n) - 1) for k, (lo, n) in LAYOUT[size].items()}
      yield Sample(f["pc"] << 4, StallReason(f["stall"]), f["wave"], f["active"]), tpc_id
  assert not any(bufs.values()), "a partial record is left over"

PROFILED = """
  import json, numpy as np
  from tinygrad import Tensor, Device
  from tinygrad.device import Compiled
  from mockgpu.compiler.ptx import parser as P
  from mockgpu.compiler.ptx.layout import entries
  rng = np.random.default_rng(SEED)
  a, b = Tensor(rng.standard_normal((32, 32), dtype=np.float32)), Tensor(rng.standard_normal((32, 32), dtype=np.float32))
  for _ in range(2): y = (a + 1).numpy()     # the same kernel twice: the samples must be identical
  z = (a @ b).numpy()
  d = Device["NV"]
  progs = {e.name: e.lib for e in Compiled.profile_events if type(e).__name__ == "ProfileProgramEvent"}
  def ninstr(name):
    fns = entries(P.parse(progs[name].decode().rstrip(chr(0))))[0]
    return sum(1 for st in fns[0][0].body if isinstance(st, P.Instr))
  pma = [e for e in Compiled.profile_events if type(e).__name__ == "ProfilePMAEvent"]
  print(json.dumps({"sm_version": d.sm_version, "add_ok": bool(np.allclose(y, a.numpy() + 1)),
                    "mm_ok": bool(np.allclose(z, a.numpy() @ b.numpy(), atol=1e-4)),
                    "events": [[e.kern, e.blob.hex(), ninstr(e.kern)] for e in pma]}))
"""

@pytest.mark.parametrize("arch", ["sm_86", "sm_89", "sm_120"])
def test_pma_samples_decode(arch, tmp_path, request):
  """VIZ=-1 PMA=1 on each board: each kernel's stream decodes by the documented layout (PCs inside the kernel, valid
  SM ids, known stall keys), is deterministic, is saved in profile.pkl and renders in tinygrad's VIZ PMA timeline."""
  from conftest import node_seed
  b = nv_board(arch)
  r = run(PROFILED.replace("SEED", str(node_seed(request.node.nodeid))), dev=f"MOCK+NV:PTX:{arch}", VIZ="-1", PMA="1", TMPDIR=str(tmp_path))
  got = result(r)
  assert got["sm_version"] == b.sm_version and got["add_ok"] and got["mm_ok"]
  events = [(k, bytes.fromhex(h), n) for k, h, n in got["events"]]
  assert len(events) >= 3 and all(blob for _, blob, _ in events)
  adds = [blob for k, blob, _ in events if k.startswith("E_")]
  assert len(adds) >= 2 and adds[0] == adds[1]
  keys = set()
  for kern, blob, n in events:
    samples = list(decode(blob, b.sm_version))
    assert samples, kern
    for s, tpc_id in samples:
      gpc, tpc, sm = decode_tpc_id(tpc_id)
      assert gpc < b.gpcs and tpc < b.tpc_per_gpc and sm < b.sm_per_tpc, (kern, tpc_id)
      assert s.pc_offset % 16 == 0 and 0 <= s.pc_offset // 16 < n, (kern, s)
      assert s.wave_id < b.max_warps_per_sm and s.active == 1
      keys.add(s.stall_reason)
  # a kernel that loads global memory waits on it; some sample catches a warp issuing
  assert {StallReason.NONE, StallReason.MEMORY_DEPENDENCY} <= keys
  # the same events reach profile.pkl, and tinygrad's VIZ PMA view renders them with this decoder standing in
  pkl = next(tmp_path.glob("profile.pkl*"))
  with open(pkl, "rb") as f: saved = [e for e in pickle.load(f) if type(e).__name__ == "ProfilePMAEvent"]
  assert [e.blob for e in saved] == [blob for _, blob, _ in events]
  mod = types.ModuleType("extra.nv_pma.decode")
  mod.decode, mod.decode_tpc_id = decode, decode_tpc_id
  for name in ("extra", "extra.nv_pma"): sys.modules.setdefault(name, types.ModuleType(name))
  sys.modules["extra.nv_pma.decode"] = mod
  try:
    from tinygrad.viz.serve import pma_timeline
    rows = pma_timeline(saved[-1].blob, b.sm_version)
  finally:
    for name in ("extra.nv_pma.decode", "extra.nv_pma", "extra"): sys.modules.pop(name, None)
  ranges = [e for e in rows if type(e).__name__ == "ProfileRangeEvent"]
  assert len(ranges) == len(list(decode(saved[-1].blob, b.sm_version)))
  assert all(e.name.display_name in StallReason.__members__ for e in ranges)

def test_pma_buffer_overflow_is_reported(tmp_path):
  """A 1 MB PMA buffer overflows on a fused matmul's samples: the PMA latches the overflow and tinygrad raises its
  error; the status stays latched (the stream must be freed), so the next launch reports it too."""
  r = run("""
    from tinygrad import Tensor
    a = Tensor.ones(64, 64).contiguous().realize()
    for what, fn in (("first", lambda: (a @ a).sum().realize()), ("next", lambda: (Tensor([1.]) + 1).realize())):
      try: fn(); print(what, "no error")
      except RuntimeError as e: print(what, "error:", e)
  """, VIZ="-1", PMA="1", PMA_BUFFER_SIZE="1", TMPDIR=str(tmp_path))
  assert "first error: PMA profiler: buffer overflow detected" in r.stdout
  assert "next error: PMA profiler: buffer overflow detected" in r.stdout

def test_stream_memory_outlives_its_handle(tmp_path):
  """RM holds the stream's memory while the profiler lives: with the ring's GPU mapping and handle freed, the next
  launch's samples still land in the same pages (tinygrad's CPU mapping) and read back."""
  r = run("""
    import json
    from tinygrad import Tensor, Device
    from tinygrad.device import Compiled
    from tinygrad.runtime.autogen import nv_570 as nv
    from tinygrad.runtime.ops_nv import nv_iowr
    d = Device["NV"]
    i = d.iface
    i.uvm(nv.UVM_FREE, nv.UVM_FREE_PARAMS(base=d.pma_buf.va_addr, length=d.pma_buf.size))   # the GPU mapping goes
    nv_iowr(i.fd_ctl, nv.NV_ESC_RM_FREE, made:=nv.NVOS00_PARAMETERS(hRoot=i.root, hObjectParent=d.nvdevice, hObjectOld=d.pma_buf.meta.hMemory))
    y = (Tensor([1., 2.]) + 1).tolist()
    pma = [e for e in Compiled.profile_events if type(e).__name__ == "ProfilePMAEvent"]
    print(json.dumps({"status": made.status, "y": y, "events": len(pma), "bytes": len(pma[-1].blob) if pma else 0}))
  """, VIZ="-1", PMA="1", TMPDIR=str(tmp_path))
  got = result(r)
  assert got["status"] == 0 and got["y"] == [2.0, 3.0] and got["events"] >= 1 and got["bytes"] % 32 == 0 and got["bytes"] > 0
