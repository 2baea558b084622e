"""The SMU (MP1) message mailbox: C2PMSG_66 message, C2PMSG_82 argument, C2PMSG_90 response; the debug mailbox
C2PMSG_75/53/54.

Protocol as the firmware checks it: the driver clears the response register, writes the argument, then the message;
the response is 1 (OK) once handled. A message sent while the previous one is unanswered (response still 0) gets
CmdRejectedBusy; an ID the SMU module does not define gets UnknownCmd; a clock ID or DPM index out of range, or a
driver table outside the framebuffer, gets Failed. The debug mailbox takes only Mode1Reset (2). Messages are events.
"""
from __future__ import annotations
from tinygrad.runtime.support.amd import import_module
from tinygrad.runtime.autogen.am import am
from mockgpu import events

DEBUG_MODE1_RESET = 2
DPM_LEVELS = {"UCLK": (96, 456, 772, 1250), "FCLK": (400, 1000, 1600, 2000), "SOCCLK": (400, 800, 1000, 1200), "GFXCLK": (500, 1500, 2482)}

class SMU:
  def __init__(self, dev):
    self.dev, regs = dev, dev.regs
    self.mod = import_module("smu", dev.board.ip_version(am.MP1_HWID))
    self.names = {v: k for k, v in vars(self.mod).items() if k.startswith("PPSMC_MSG_") and isinstance(v, int)}
    self.clocks = {getattr(self.mod, f"PPCLK_{k}"): v for k, v in DPM_LEVELS.items() if hasattr(self.mod, f"PPCLK_{k}")}
    self.features_enabled, self.driver_table, self.soft_min, self.soft_max = False, 0, {}, {}
    regs.set("mmMP1_SMN_C2PMSG_90", 1)  # idle: the last (power-on) message answered
    regs.set("mmMP1_SMN_C2PMSG_54", 1)
    regs.on_write("mmMP1_SMN_C2PMSG_66", lambda v: self._message(v, debug=False))
    regs.on_write("mmMP1_SMN_C2PMSG_75", lambda v: self._message(v, debug=True))

  def _message(self, msg:int, debug:bool):
    regs = self.dev.regs
    resp_reg, arg_reg = ("mmMP1_SMN_C2PMSG_54", "mmMP1_SMN_C2PMSG_53") if debug else ("mmMP1_SMN_C2PMSG_90", "mmMP1_SMN_C2PMSG_82")
    if regs.get(resp_reg) != 0: status, out = self.mod.PPSMC_Result_CmdRejectedBusy, None   # the response was not cleared first
    else: status, out = self._handle(msg, regs.get(arg_reg), debug)
    name = ("DEBUGSMC_MSG_Mode1Reset" if msg == DEBUG_MODE1_RESET else f"debug 0x{msg:x}") if debug else self.names.get(msg, f"0x{msg:x}")
    if events.enabled: events.emit("smu", self.dev.name, msg=name, arg=regs.get(arg_reg), status=status, out=out)
    if out is not None: regs.set(arg_reg, out)
    regs.set(resp_reg, status)

  def _handle(self, msg:int, arg:int, debug:bool) -> tuple[int, int|None]:
    m, OK, FAIL = self.mod, self.mod.PPSMC_Result_OK, self.mod.PPSMC_Result_Failed
    if debug:
      if msg != DEBUG_MODE1_RESET: return m.PPSMC_Result_UnknownCmd, None
      self.dev.mode1_reset()
      return OK, None
    if msg not in self.names: return m.PPSMC_Result_UnknownCmd, None
    name = self.names[msg]
    if name == "PPSMC_MSG_GetSmuVersion": return OK, 0x004e5100
    if name == "PPSMC_MSG_SetDriverDramAddrHigh": self.driver_table = (self.driver_table & 0xffffffff) | arg << 32; return OK, None
    if name == "PPSMC_MSG_SetDriverDramAddrLow":
      self.driver_table = (self.driver_table & ~0xffffffff) | arg
      return (OK if self.dev.gmc.in_fb(self.driver_table, 0x4000) else FAIL), None
    if name == "PPSMC_MSG_EnableAllSmuFeatures": self.features_enabled = True; return OK, None
    if name == "PPSMC_MSG_GetDpmFreqByIndex":
      clk, idx = arg >> 16, arg & 0xffff
      if clk not in self.clocks: return FAIL, None
      if idx == 0xff: return OK, len(self.clocks[clk])
      return (OK, self.clocks[clk][idx]) if idx < len(self.clocks[clk]) else (FAIL, None)
    if name in ("PPSMC_MSG_SetSoftMinByFreq", "PPSMC_MSG_SetSoftMaxByFreq"):
      clk, freq = arg >> 16, arg & 0xffff
      if clk not in self.clocks or not (freq == 0xffff or freq in self.clocks[clk] or freq == 0): return FAIL, None
      (self.soft_min if name.endswith("MinByFreq") else self.soft_max)[clk] = freq
      return OK, None
    return FAIL, None   # a defined message this model does not implement: refused, never accepted silently
