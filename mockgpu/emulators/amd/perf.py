"""The performance monitor of an AMD GPU (gfx11/gfx12): the SQ/SPI/GRBM/GL2C registers tinygrad programs for thread
traces (SQTT) and performance counters (PMC), as GPU-global state per XCC and per shader engine, not per queue.

- GRBM_GFX_INDEX (kept by the queue, as the MEC does) selects the SE / SA / instance a perf register access reaches;
  its broadcast bits make a write reach all of them.
- Thread trace per SE: BUF0 base and size, MASK (the traced SA/WGP/SIMD), TOKEN_MASK (excluded tokens), CTRL (mode 1
  starts a trace, mode 0 ends it), STATUS (finish_pending, finish_done, busy), WPTR (in 32-byte units; absolute on
  gfx 11.0, relative to the buffer on gfx 11.5 and gfx12, the rule tinygrad's readback follows). EVENT_WRITE
  THREAD_TRACE_FINISH writes each SE's trace into its buffer; a trace larger than the buffer stops at its last 32
  bytes, as the hardware's WPTR does. Dispatches run while COMPUTE_THREAD_TRACE_ENABLE is set on their queue and an
  SE's mode is 1 are traced (sqtt.py).
- Counters: <BLOCK>_PERFCOUNTER<n>_SELECT (broadcast; on gfx11+ the SQ selects are the even ones, SELECT 2k feeding
  counter k), CP_PERFMON_CNTL (gfx12: CP_PERFMON_CNTL_1): perfmon_state 0 resets, 1 counts, 2 stops; perfmon_sample_enable
  latches the counters into what <BLOCK>_PERFCOUNTER<k>_LO/HI read. Dispatches count while the state is 1 (pmc.py has
  the values). COMPUTE_PERFCOUNT_ENABLE is kept but does not gate counting: tinygrad's dispatch set-up writes it 0 (the
  8-register COMPUTE_START_X write ends on it) and real captures still count.
- gfx9 (CDNA, each XCC with its own counters, reached through PRED_EXEC): one SQ per SE (its counters are the SE's
  sum), TCC (16 instances) for L2, any SQ select (no even-only rule), SQ_PERFCOUNTER_MASK kept.
- gfx9 thread traces (per XCC and SE, the XCC through PRED_EXEC): BASE / BASE2 / SIZE (4 KiB units), MASK (cu_sel: the
  traced CU, simd_en: its SIMDs with instruction tokens), TOKEN_MASK (token_mask: the included tokens), TOKEN_MASK2 (all
  instruction types), CTRL reset_buffer, MODE (mode 1 starts a trace; mode 0 ends it and writes it into the buffer: gfx9
  has no THREAD_TRACE_FINISH in tinygrad's flow and no COMPUTE_THREAD_TRACE_ENABLE: CS waves are traced while mode is 1
  and mask_cs is set), STATUS (busy), WPTR (relative, 32-byte units). tinygrad's stop sequence waits on STATUS at its
  offset in the UCONFIG space (regSQ_THREAD_TRACE_STATUS - PACKET3_SET_UCONFIG_REG_START, 0x33a), which reads STATUS here:
  inferred from tinygrad's code and its MI350X captures (the sequence completes on hardware), not from AMD documentation.
  sqtt_cdna.py has the packets and the model.
Unmodelled (named, never a zero): SPM, counter selections without a model, per-instance selections, trace modes other
than on/off, gfx9 trace wrap / capture modes and instruction-type masks.
"""
from __future__ import annotations
import collections, functools, re
import numpy as np
from mockgpu.errors import PacketError, Unmodelled
from mockgpu.emulators.amd import isa, pmc, sqtt, sqtt_cdna
from mockgpu.emulators.rdna.recorder import check_blocks

PERF_NAME = re.compile(r"(SPI_CONFIG_CNTL|SQ_THREAD_TRACE_.*|.*PERFCOUNTER.*|.*PERFMON.*|SQ_PERFCOUNTER_.*)")
COUNTER = re.compile(r"(?P<block>[A-Z0-9]+)_PERFCOUNTER(?P<n>\d+)_(?P<part>SELECT|LO|HI)")
EXCLUDE_BIT = {"VMEMEXEC": 0, "ALUEXEC": 1, "VALUINST": 2, "WAVESTART": 4, "WAVEEND": 4, "IMMEDIATE": 5, "INST": 8}
# gfx9 TOKEN_MASK.token_mask: the bits that include a token (tinygrad's __SQTT_* names in sqtt_start)
INCLUDE_BIT_GFX9 = {"CDNA_WAVESTART": 3, "CDNA_WAVEEND": 6, "CDNA_INST": 10, "CDNA_ISSUE": 13}
UCONFIG_START = 0xc000  # PACKET3_SET_UCONFIG_REG_START (gfx9's pm4 tables)
QUEUE_REGS = {"COMPUTE_THREAD_TRACE_ENABLE", "COMPUTE_PERFCOUNT_ENABLE"}  # per queue (the MEC pipe's), kept by pm4.py

class Trace:
  """One SE's thread trace: its registers and, while it runs, the model unit it records."""
  def __init__(self):
    self.regs:collections.defaultdict[str, int] = collections.defaultdict(int)
    self.unit:sqtt.Unit|None = None
    self.finish_done, self.busy, self.wptr_bytes, self.base, self.full = 0, 0, 0, 0, False

class XCCPerf:
  def __init__(self, se:int):
    self.regs:collections.defaultdict[str, int] = collections.defaultdict(int)  # SPI_CONFIG_CNTL, SQ_PERFCOUNTER_CTRL*, USERDATA
    self.traces = [Trace() for _ in range(se)]
    self.state = 0                                   # CP_PERFMON_CNTL.perfmon_state
    self.counters:dict[tuple[str, int], tuple[str, np.ndarray]] = {}  # (block, counter) -> (name, values per instance)
    self.sample:dict[tuple[str, int], np.ndarray]|None = None

class Perf:
  def __init__(self, gpu):
    self.gpu, board, gc = gpu, gpu.board, gpu.gc
    self.gfx, self.board = board.gc_version, board
    # SQ counters per WGP on gfx11+; gfx9 (CDNA) has one SQ per SE, read with GRBM selecting the SE alone
    self.shape = (board.se, 1, 1) if self.gfx[0] == 9 else (board.se, board.sa_per_se, board.cu_per_sa // 2)
    self.names:dict[int, str] = {}
    for name, reg in gc.regs.items():
      if PERF_NAME.fullmatch(short:=name.removeprefix("reg")) and short not in QUEUE_REGS: self.names.setdefault(reg.addr[0], short)
    perfmon = gc.regs["regCP_PERFMON_CNTL" if self.gfx[0] <= 11 else "regCP_PERFMON_CNTL_1"]
    self.names[perfmon.addr[0]] = "CP_PERFMON_CNTL"
    self.perfmon = perfmon
    if self.gfx[0] == 9: self.names[status_alias(gc)] = "SQ_THREAD_TRACE_STATUS"
    self.xccs = [XCCPerf(board.se) for _ in range(board.num_xcc)]
    v = board.gfx_target_version  # tinygrad's AMDDevice.target, which names gfx9's tables (gfx942 is GC 9.4.3)
    self.by_select = {(blk, idx): name for name, (blk, idx) in _pmc_table((v // 10000, v // 100 % 100, v % 100)).items()}
    self.layout = sqtt_cdna.LAYOUT if self.gfx[0] == 9 else sqtt.LAYOUTS[4 if self.gfx[0] >= 12 else 3]

  def owns(self, addr:int) -> str|None: return self.names.get(addr)

  def _reg(self, name:str): return self.gpu.gc.regs["reg" + name] if name != "CP_PERFMON_CNTL" else self.perfmon

  # *** register writes and reads ***
  def write(self, xcc:int, name:str, value:int, grbm:int):
    x, g = self.xccs[xcc], self._grbm(grbm)
    if name == "CP_PERFMON_CNTL": return self._perfmon(x, value)
    if (m:=COUNTER.fullmatch(name)) is not None: return self._counter_write(x, m, name, value, g)
    if name.startswith("SQ_THREAD_TRACE_") and name not in ("SQ_THREAD_TRACE_USERDATA_2", "SQ_THREAD_TRACE_USERDATA_3"):
      if name in ("SQ_THREAD_TRACE_STATUS", "SQ_THREAD_TRACE_WPTR"): raise Unmodelled(f"register {name}: writing it is not modelled")
      for se in g["ses"]: self._trace_write(x, se, name, value)
      return
    if name in ("SPI_CONFIG_CNTL", "SQ_PERFCOUNTER_CTRL", "SQ_PERFCOUNTER_CTRL2", "SQ_PERFCOUNTER_MASK", "SQ_THREAD_TRACE_USERDATA_2",
                "SQ_THREAD_TRACE_USERDATA_3"):
      x.regs[name] = value
      return
    raise Unmodelled(f"register {name}: {'the streaming performance monitor (SPM)' if 'SPM' in name else 'this performance register'} "
                     f"is not modelled")

  def read(self, xcc:int, name:str, grbm:int) -> int:
    x, g = self.xccs[xcc], self._grbm(grbm)
    if name == "CP_PERFMON_CNTL": return x.state
    if (m:=COUNTER.fullmatch(name)) is not None and m["part"] != "SELECT": return self._counter_read(x, m, name, g)
    if name == "SQ_THREAD_TRACE_STATUS":
      t = x.traces[g["se"]]
      if self.gfx[0] == 9: return self._reg(name).encode(busy=t.busy, full=int(t.full))
      return self._reg(name).encode(finish_pending=0, finish_done=t.finish_done, busy=t.busy)
    if name == "SQ_THREAD_TRACE_WPTR": return self._wptr(x.traces[g["se"]])
    if name.startswith("SQ_THREAD_TRACE_"): return x.traces[g["se"]].regs[name]
    if name in x.regs: return x.regs[name]
    raise Unmodelled(f"register {name}: reading it is not modelled")

  def _grbm(self, value:int) -> dict:
    f = self.gpu.gc.regGRBM_GFX_INDEX.decode(value)
    if self.gfx[0] == 9: f = {k.replace("sh_", "sa_"): v for k, v in f.items()}  # gfx9 names the SA a shader array (SH)
    if f["se_index"] >= self.board.se or f["sa_index"] >= self.board.sa_per_se:
      raise PacketError(f"GRBM_GFX_INDEX 0x{value:x} selects SE {f['se_index']} SA {f['sa_index']}: the board has {self.board.se} SEs "
                        f"of {self.board.sa_per_se} SAs")
    ses = range(self.board.se) if f["se_broadcast_writes"] else [f["se_index"]]
    return {"ses": ses, "se": f["se_index"], "sa": f["sa_index"], "instance": f["instance_index"], "value": value,
            "broadcast": bool(f["se_broadcast_writes"] and f["sa_broadcast_writes"] and f["instance_broadcast_writes"])}

  # *** counters ***
  def _perfmon(self, x:XCCPerf, value:int):
    f = self.perfmon.decode(value)
    if f["spm_perfmon_state"]: raise Unmodelled(f"CP_PERFMON_CNTL spm_perfmon_state {f['spm_perfmon_state']}: the streaming performance "
                                                f"monitor (SPM) is not modelled")
    if f["perfmon_enable_mode"]: raise Unmodelled(f"CP_PERFMON_CNTL perfmon_enable_mode {f['perfmon_enable_mode']} is not modelled")
    if f["perfmon_state"] not in (0, 1, 2): raise PacketError(f"CP_PERFMON_CNTL perfmon_state {f['perfmon_state']} is not defined")
    x.state = f["perfmon_state"]
    if x.state == 0:  # disable and reset
      for _, values in x.counters.values(): values[...] = 0
      x.sample = None
    if f["perfmon_sample_enable"]:
      if x.state == 0: raise PacketError("CP_PERFMON_CNTL perfmon_sample_enable with perfmon_state 0: there is nothing to sample")
      x.sample = {k: values.copy() for k, (_, values) in x.counters.items()}

  def _counter_write(self, x:XCCPerf, m, name:str, value:int, g:dict):
    if m["part"] != "SELECT": raise Unmodelled(f"register {name}: writing a counter's value is not modelled")
    block, n = m["block"], int(m["n"])
    if block not in ("SQ", "GRBM", "GL2C", "TCC"): raise Unmodelled(f"register {name}: {block} counters are not modelled")
    if not g["broadcast"]: raise Unmodelled(f"register {name} written with GRBM_GFX_INDEX 0x{g['value']:x}: a per-instance counter "
                                            f"selection is not modelled (only broadcast ones)")
    if block == "SQ" and self.gfx[0] != 9:
      if n % 2: raise Unmodelled(f"register {name}: the odd SQ selects (the high half of a 64-bit SQ counter) are not modelled")
      n //= 2
    sel = self._reg(name).decode(value)["perf_sel"]
    cname = self.by_select.get((block, sel))
    if cname is None: raise Unmodelled(f"register {name}: {block} counter {sel} is not one tinygrad names; it is not modelled")
    if cname not in pmc.MODELLED: raise Unmodelled(f"register {name}: counter {cname} ({block} {sel}) is not modelled")
    shape = {"SQ": self.shape, "GRBM": (1,), "GL2C": (pmc.GL2C_INSTANCES,), "TCC": (pmc.TCC_INSTANCES,)}[block]
    x.counters[(block, n)] = (cname, np.zeros(shape, np.int64))

  def _counter_read(self, x:XCCPerf, m, name:str, g:dict) -> int:
    key = (m["block"], int(m["n"]))
    if key not in x.counters: raise PacketError(f"read of {name}: no counter {key[1]} of {key[0]} was selected")
    if x.sample is None or key not in x.sample:
      raise PacketError(f"read of {name} without a sample latched (CP_PERFMON_CNTL.perfmon_sample_enable)")
    values = x.sample[key]
    if key[0] == "SQ":
      wgp = g["instance"] >> 2
      if wgp >= self.shape[2]: raise PacketError(f"read of {name}: GRBM instance {g['instance']} selects WGP {wgp}, an SA has {self.shape[2]}")
      v = int(values[g["se"], g["sa"], wgp])
    elif key[0] in ("GL2C", "TCC"):
      if g["instance"] >= len(values): raise PacketError(f"read of {name}: GL2C instance {g['instance']} of {len(values)}")
      v = int(values[g["instance"]])
    else: v = int(values[0])
    return v & 0xffffffff if m["part"] == "LO" else v >> 32 & 0xffffffff

  # *** thread traces ***
  def _trace_write(self, x:XCCPerf, se:int, name:str, value:int):
    t = x.traces[se]
    t.regs[name] = value
    if self.gfx[0] == 9: return self._trace_write9(x, t, se, name, value)
    if name != "SQ_THREAD_TRACE_CTRL": return
    mode = self._reg(name).decode(value)["mode"]
    if mode not in (0, 1): raise Unmodelled(f"SQ_THREAD_TRACE_CTRL mode {mode} (SE {se}) is not modelled (only 0, off, and 1, on)")
    if mode == 1 and t.unit is None: self._trace_start(t, se)
    elif mode == 0: t.busy = 0

  def _trace_write9(self, x:XCCPerf, t:Trace, se:int, name:str, value:int):
    """gfx9: MODE starts (mode 1) and ends (mode 0) a trace; CTRL.reset_buffer rewinds WPTR."""
    if name == "SQ_THREAD_TRACE_CTRL" and self._reg(name).decode(value)["reset_buffer"]: t.wptr_bytes, t.full = 0, False
    if name != "SQ_THREAD_TRACE_MODE": return
    f = self._reg(name).decode(value)
    for field in ("capture_mode", "wrap", "test_mode", "interrupt_en", "tc_perf_en", "issue_mask"):
      if f[field]: raise Unmodelled(f"SQ_THREAD_TRACE_MODE {field} {f[field]} (SE {se}) is not modelled")
    if f["mode"] not in (0, 1): raise Unmodelled(f"SQ_THREAD_TRACE_MODE mode {f['mode']} (SE {se}) is not modelled (only 0, off, and 1, on)")
    if f["mode"] == 1 and t.unit is None: self._trace_start9(t, se, f)
    elif f["mode"] == 0 and t.unit is not None: self._trace_finish(t, se)

  def _trace_start9(self, t:Trace, se:int, mode:dict):
    base, size = self._buffer(t)
    if size == 0: raise PacketError(f"SQ_THREAD_TRACE_MODE mode 1 on SE {se} with a SIZE of 0")
    mask = self._reg("SQ_THREAD_TRACE_MASK").decode(t.regs["SQ_THREAD_TRACE_MASK"])
    if mask["cu_sel"] >= self.board.cu_per_sa or mask["sh_sel"] >= self.board.sa_per_se:
      raise PacketError(f"SQ_THREAD_TRACE_MASK selects CU {mask['cu_sel']} of SH {mask['sh_sel']} on SE {se}: there is none")
    if (inst := t.regs["SQ_THREAD_TRACE_TOKEN_MASK2"]) != 0xffffffff:
      raise Unmodelled(f"SQ_THREAD_TRACE_TOKEN_MASK2 inst_mask 0x{inst:x} (SE {se}): masking instruction types is not modelled")
    include = self._reg("SQ_THREAD_TRACE_TOKEN_MASK").decode(t.regs["SQ_THREAD_TRACE_TOKEN_MASK"])["token_mask"]
    t.unit = sqtt.Unit(rdna4=False, t0=0, simd=0, slots=self.board.max_waves_per_simd, timing=sqtt_cdna.TIMING)
    t.unit.exclude = {name for name, bit in INCLUDE_BIT_GFX9.items() if not include >> bit & 1}
    t.unit.place, t.unit.simds = (mask["sh_sel"], mask["cu_sel"]), [s for s in range(self.board.simd_per_cu) if mask["simd_en"] >> s & 1]
    t.unit.cs = bool(mode["mask_cs"])
    t.unit.limit = size - 32
    t.base, t.busy, t.wptr_bytes, t.full = base, 1, 0, False

  def _buffer(self, t:Trace) -> tuple[int, int]:
    """(base VA, size in bytes) of an SE's BUF0."""
    r = t.regs
    if self.gfx[0] == 9:
      size = self._reg("SQ_THREAD_TRACE_SIZE").decode(r["SQ_THREAD_TRACE_SIZE"])["size"]
      base = r["SQ_THREAD_TRACE_BASE"] | (self._reg("SQ_THREAD_TRACE_BASE2").decode(r["SQ_THREAD_TRACE_BASE2"])["addr_hi"] << 32)
    elif self.gfx[0] >= 12:
      size = self._reg("SQ_THREAD_TRACE_BUF0_SIZE").decode(r["SQ_THREAD_TRACE_BUF0_SIZE"])["size"]
      base = r["SQ_THREAD_TRACE_BUF0_BASE_LO"] | (r["SQ_THREAD_TRACE_BUF0_BASE_HI"] << 32)
    else:
      f = self._reg("SQ_THREAD_TRACE_BUF0_SIZE").decode(r["SQ_THREAD_TRACE_BUF0_SIZE"])
      size, base = f["size"], r["SQ_THREAD_TRACE_BUF0_BASE"] | (f["base_hi"] << 32)
    return base << 12, size << 12

  def _trace_start(self, t:Trace, se:int):
    base, size = self._buffer(t)
    if size == 0: raise PacketError(f"SQ_THREAD_TRACE_CTRL mode 1 on SE {se} with a BUF0 size of 0")
    mask = self._reg("SQ_THREAD_TRACE_MASK").decode(t.regs["SQ_THREAD_TRACE_MASK"])
    if mask["wgp_sel"] >= self.shape[2] or mask["sa_sel"] >= self.shape[1]:
      raise PacketError(f"SQ_THREAD_TRACE_MASK selects WGP {mask['wgp_sel']} of SA {mask['sa_sel']} on SE {se}: there is none")
    exclude = self._reg("SQ_THREAD_TRACE_TOKEN_MASK").decode(t.regs["SQ_THREAD_TRACE_TOKEN_MASK"])["token_exclude"]
    t.unit = sqtt.Unit(rdna4=self.gfx[0] >= 12, t0=0, simd=mask["simd_sel"], slots=self.board.max_waves_per_simd)
    t.unit.exclude = {name for name, bit in EXCLUDE_BIT.items() if exclude >> bit & 1}
    t.unit.place = (mask["sa_sel"], mask["wgp_sel"])
    t.unit.limit = size - 32
    t.base, t.busy, t.finish_done, t.wptr_bytes = base, 1, 0, 0

  def event(self, xcc:int, event:str):
    """THREAD_TRACE_MARKER (a marker between dispatches: nothing to record) or THREAD_TRACE_FINISH."""
    if event != "THREAD_TRACE_FINISH": return
    if self.gfx[0] == 9: raise Unmodelled("EVENT_WRITE THREAD_TRACE_FINISH on gfx9 is not modelled (SQ_THREAD_TRACE_MODE mode 0 ends a trace)")
    for se, t in enumerate(self.xccs[xcc].traces):
      if t.unit is not None: self._trace_finish(t, se)

  def _trace_finish(self, t:Trace, se:int):
    """Write the SE's trace into its buffer (at most its size less 32 bytes, where the hardware's WPTR stops)."""
    base, size = self._buffer(t)
    if self.gfx[0] == 9: blob, full = sqtt_cdna.encode(t.unit, size - 32)
    else: blob, full = sqtt.encode(t.unit, self.layout, size - 32, self.board.max_engine_clk)
    self.gpu.mem.write(base, blob, f"{self.gpu.name} SQTT SE {se} BUF0")
    t.wptr_bytes, t.unit, t.finish_done, t.busy, t.full = len(blob), None, 1, 0, full

  def _wptr(self, t:Trace) -> int:
    units = t.wptr_bytes // 32
    if self.gfx[:2] == (11, 0): units += t.base // 32  # gfx 11.0: WPTR is absolute
    return units & 0x1fffffff

  # *** dispatches ***
  def enabled_wgps(self, qregs) -> np.ndarray:
    """[n, 3] (SE, SA, WGP) of the WGPs the queue's COMPUTE_STATIC_THREAD_MGMT_SE<i> CU masks enable (SA0's CUs in bits
    15:0, SA1's in 31:16; a WGP runs work when either of its two CUs is enabled), ordered WGP-major then SA then SE
    (the placement's round robin). A mask never written enables every CU (KFD's MQD default)."""
    se_n, sa_n, wgp_n = self.shape
    if self.gfx[0] == 9: return self._enabled_cus(qregs)
    masks = [qregs[f"COMPUTE_STATIC_THREAD_MGMT_SE{se}"] if f"COMPUTE_STATIC_THREAD_MGMT_SE{se}" in qregs else 0xffffffff
             for se in range(se_n)]
    units = [(se, sa, w) for w in range(wgp_n) for sa in range(sa_n) for se in range(se_n) if masks[se] >> (16 * sa + 2 * w) & 3]
    if not units: raise PacketError(f"a dispatch with no CU enabled (COMPUTE_STATIC_THREAD_MGMT_SE0..{se_n - 1} are all 0)")
    return np.array(units, np.int64)

  def _enabled_cus(self, qregs) -> np.ndarray:
    """gfx9: (SE, 0, 0, CU) once per enabled CU (COMPUTE_STATIC_THREAD_MGMT_SE<i> bit c enables CU c of SE i's one SA),
    CU-major then SE: the placement's round robin over CUs, whose SQ counters add up per SE (the first three columns)."""
    se_n = self.shape[0]
    masks = [qregs[f"COMPUTE_STATIC_THREAD_MGMT_SE{se}"] if f"COMPUTE_STATIC_THREAD_MGMT_SE{se}" in qregs else 0xffffffff
             for se in range(se_n)]
    units = [(se, 0, 0, cu) for cu in range(self.board.cu_per_sa) for se in range(se_n) if masks[se] >> cu & 1]
    if not units: raise PacketError(f"a dispatch with no CU enabled (COMPUTE_STATIC_THREAD_MGMT_SE0..{se_n - 1} are all 0)")
    return np.array(units, np.int64)

  def wants(self, xcc:int, qregs) -> bool:
    x = self.xccs[xcc]
    counting = x.state == 1 and x.counters
    return bool(counting or (self._tracing(qregs) and any(t.unit is not None for t in x.traces)))

  def _tracing(self, qregs) -> bool:
    """Whether the queue's dispatches are traced: COMPUTE_THREAD_TRACE_ENABLE on gfx11+; on gfx9 MODE.mask_cs (per unit)."""
    return self.gfx[0] == 9 or bool(qregs["COMPUTE_THREAD_TRACE_ENABLE"])

  def dispatched(self, xcc:int, d, rec, qregs):
    """Count and trace a dispatch the executor ran with the recorder `rec`."""
    if rec.prog is None and len(d.workgroup_ids()) == 0: return None  # none of the workgroups ran on this XCC
    if rec.prog is None: raise Unmodelled("profiling a dispatch the debugger ran (not the numpy path) is not modelled")
    x = self.xccs[xcc]
    prof = DispatchProfile(self, d, rec, self.enabled_wgps(qregs))
    if x.state == 1:
      counts = prof.counts()
      sq_on = self.gpu.gc.regSQ_PERFCOUNTER_CTRL.decode(x.regs["SQ_PERFCOUNTER_CTRL"])["cs_en"]
      for (block, _), (name, values) in x.counters.items():
        if block != "SQ" or sq_on: pmc.add(name, values, counts)
    if self._tracing(qregs):
      for se, t in enumerate(x.traces):
        if t.unit is None: continue
        if self.gfx[0] == 9:
          if t.unit.cs: prof.trace_cdna(se, t.unit)
        else: prof.trace(se, t.unit, self.layout)
    return prof

def status_alias(gc) -> int:
  """gfx9: the address tinygrad's sqtt_stop waits on for SQ_THREAD_TRACE_STATUS (its offset in the UCONFIG space)."""
  return gc.regs["regSQ_THREAD_TRACE_STATUS"].addr[0] - UCONFIG_START

def _pmc_table(gfx) -> dict:
  from tinygrad.runtime.support.amd import import_pmc
  return import_pmc(gfx)

class DispatchProfile:
  """What a dispatch ran, by workgroup placement: counts per WGP, streams of the traced units' waves."""
  def __init__(self, perf:Perf, d, rec, units:np.ndarray):
    self.perf, self.d, self.rec, self.units = perf, d, rec, units
    self.info, self.blocks = isa.program_info(rec.prog.code, d.arch)
    check_blocks(rec.prog, self.blocks)

  def place(self, i:np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MODEL: workgroup i (in dispatch order) goes to the (i mod n)-th of the n enabled WGPs, taken SE first, then SA,
    then WGP (with every WGP enabled: SE i mod SEs, then SA, then WGP round robin)."""
    u = self.units[i % len(self.units)]
    return u[..., 0], u[..., 1], u[..., 2]

  @functools.cached_property
  def cycles(self) -> int:
    """MODEL: the dispatch's cycles (pmc.DispatchCounts)."""
    return self.counts().cycles

  @functools.lru_cache(maxsize=None)
  def counts(self) -> pmc.DispatchCounts:
    nb = len(self.blocks)
    m = np.zeros((len(pmc.CLASSES), nb), np.int64)
    for b, pcs in enumerate(self.blocks):
      for pc in pcs:
        if (c:=self.info[pc].pmc) in pmc.CLASSES: m[pmc.CLASSES.index(c), b] += 1
    lens = np.array([len(p) for p in self.blocks], np.int64)
    per = {c: np.zeros(self.perf.shape, np.int64) for c in (*pmc.CLASSES, "waves", "conflicts")}
    insts, longest, pos = np.zeros(self.perf.shape, np.int64), np.zeros(self.perf.shape, np.int64), 0
    for c in self.rec.chunks:
      v = self.rec.visits(c)
      where = self.place(np.repeat(np.arange(pos, pos + len(c.ids)), c.wpg))
      for k, name in enumerate(pmc.CLASSES): np.add.at(per[name], where, m[k] @ v)
      np.add.at(per["waves"], where, 1)
      np.add.at(per["conflicts"], where, c.conflicts)
      wave_insts = lens @ v
      np.add.at(insts, where, wave_insts)
      np.maximum.at(longest, where, wave_insts)
      pos += len(c.ids)
    return pmc.DispatchCounts(per, insts, longest, self.d.wave_size)

  def trace(self, se:int, unit:sqtt.Unit, layout:sqtt.Layout):
    """Simulate the traced SIMD of SE se for this dispatch (MODEL), with the exact streams of its waves."""
    sa_sel, wgp_sel = unit.place
    waves_by_wg, pos, order = [], 0, 0
    wgp_simds = 2 * self.perf.board.simd_per_cu  # WGP mode: a WGP is two CUs
    for c in self.rec.chunks:
      s, a, w = self.place(np.arange(pos, pos + len(c.ids)))
      for local in np.nonzero((s == se) & (a == sa_sel) & (w == wgp_sel))[0]:
        group = []
        for k in range(unit.simd, c.wpg, wgp_simds):  # wave k of a workgroup on SIMD k mod 4
          group.append(sqtt.Wave(order, pos + int(local), functools.partial(self.stream, c, int(local) * c.wpg + k)))
          order += 1
        if group: waves_by_wg.append(group)
      pos += len(c.ids)
    unit.t0 = unit.end + sqtt.LAUNCH
    sqtt.simulate(unit, waves_by_wg, layout)

  def trace_cdna(self, se:int, unit:sqtt.Unit):
    """CDNA: simulate the traced CU's SIMDs of SE se (MODEL). The waves arriving at the CU go to its SIMDs round robin."""
    _, cu_sel = unit.place
    per_simd:dict[int, list] = {s: [] for s in unit.simds}
    pos, order, arrived, simds = 0, 0, 0, self.perf.board.simd_per_cu
    for c in self.rec.chunks:
      u = self.units[np.arange(pos, pos + len(c.ids)) % len(self.units)]
      for local in np.nonzero((u[:, 0] == se) & (u[:, 3] == cu_sel))[0]:
        groups:dict[int, list] = {}
        for k in range(c.wpg):
          simd = (arrived + k) % simds
          if simd in per_simd:
            groups.setdefault(simd, []).append(sqtt.Wave(order, pos + int(local), functools.partial(self.stream, c, int(local) * c.wpg + k)))
            order += 1
        for simd, group in groups.items(): per_simd[simd].append(group)
        arrived += c.wpg
      pos += len(c.ids)
    unit.t0, unit.lanes = unit.end + sqtt.LAUNCH, self.d.wave_size
    unit.ops = isa.cdna_ops(self.rec.prog.code, self.d.arch)
    for simd, waves_by_wg in per_simd.items():
      if not waves_by_wg: continue
      unit.simd = simd
      sqtt.simulate(unit, waves_by_wg, sqtt_cdna.LAYOUT)

  def stream(self, c, wave:int) -> list:
    """The wave's dynamic instruction stream: (pc, InstInfo, branch taken, simm16) per instruction it ran."""
    seq = self.rec.wave_blocks(c, wave)
    insts = self.rec.prog.insts
    out = []
    for i, b in enumerate(seq):
      pcs = self.blocks[b]
      nxt = self.blocks[seq[i + 1]][0] if i + 1 < len(seq) else None
      for pc in pcs:
        info = self.info[pc]
        out.append((pc, info, nxt is not None and nxt != pc + info.size, getattr(insts[pc], "simm16", 0) or 0))
    return out
