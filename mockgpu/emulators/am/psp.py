"""The PSP (MP0): the bootloader that loads the sOS components, then the sOS's KM ring and its commands.

Bootloader: C2PMSG_35 bit 31 says it is ready for a command; the driver copies a component into msg1 (1 MiB
aligned, MC address >> 20 in C2PMSG_36) and writes the load command to C2PMSG_35. The model compares msg1 with the
synthetic firmware's payload of that component (firmware.payload): a wrong payload, a command while busy, a component
after the sOS or msg1 outside the framebuffer leaves the bootloader stuck (bit 31 never comes back; AM times out
"BL not ready"), as a real bootloader rejects an image whose signature fails. Loading SOSDRV starts the sOS
(C2PMSG_81 != 0).

KM ring: created through C2PMSG_64 (ring type << 16) with the MC address in 69/70 and its size in 71, only while the
sOS runs; C2PMSG_64 then reads 0x80000000. Submission: C2PMSG_67 (the write pointer, in dwords) advances by exactly one
64-byte frame; each frame names a command buffer and a fence in the framebuffer. Each command is checked: known ID,
LOAD_IP_FW with a known type whose payload in msg1 is that type's synthetic piece, LOAD_TOC before SETUP_TMR, the TMR
large enough, AUTOLOAD_RLC only after the CP, RLC and IMU pieces are in. A refused command gets a non-zero
resp.status, which tinygrad reports as "PSP command failed"; the fence is written either way.
"""
from __future__ import annotations
import ctypes
from tinygrad.runtime.autogen.am import am
from mockgpu import events
from mockgpu.emulators.am import firmware

READY = 0x80000000
STATUS_INVALID = 0xFFFF0007   # a command the sOS refuses (TEE_ERROR_BAD_PARAMETERS class)
BL_COMPONENTS = {am.PSP_BL__LOAD_KEY_DATABASE: "PSP_KDB", am.PSP_BL__LOAD_TOS_SPL_TABLE: "PSP_SPL", am.PSP_BL__LOAD_SYSDRV: "PSP_SYS_DRV",
                 am.PSP_BL__LOAD_SOCDRV: "PSP_SOC_DRV", am.PSP_BL__LOAD_INTFDRV: "PSP_INTF_DRV", am.PSP_BL__LOAD_DBGDRV: "PSP_DBG_DRV",
                 am.PSP_BL__LOAD_RASDRV: "PSP_RAS_DRV", am.PSP_BL__LOAD_SOSDRV: "PSP_SOS"}
TMR_SIZE = 0x100000
FRAME = ctypes.sizeof(am.struct_psp_gfx_rb_frame)

class PSP:
  def __init__(self, dev):
    self.dev = dev
    mp0 = dev.board.ip_version(am.MP0_HWID)
    self.pref = "regMP0_SMN_C2PMSG" if mp0 < (14, 0, 0) else "regMPASP_SMN_C2PMSG"
    self.sos_name = f"psp_{'_'.join(map(str, mp0))}_sos.bin"
    self.gc = dev.board.gc_version
    self.reset()
    regs = dev.regs
    regs.on_read(f"{self.pref}_35", lambda: READY if self.bl_ready else 0)
    regs.on_write(f"{self.pref}_35", self._bootloader)
    regs.on_read(f"{self.pref}_81", lambda: 0x1 if self.sos_alive else 0)
    regs.on_read(f"{self.pref}_64", lambda: self.ring_ctl)
    regs.on_write(f"{self.pref}_64", self._ring_control)
    regs.on_read(f"{self.pref}_67", lambda: self.wptr)
    regs.on_write(f"{self.pref}_67", self._submit)

  def reset(self):
    self.bl_ready, self.sos_alive, self.loaded_bl, self.ring, self.ring_ctl, self.wptr = True, False, [], None, 0, 0
    self.loaded:dict[int, bytes] = {}
    self.toc_loaded, self.tmr, self.autoloaded = False, None, False

  # *** the bootloader ***
  def _bootloader(self, cmd:int):
    regs, comp = self.dev.regs, BL_COMPONENTS.get(cmd)
    # the quirk AM relies on: before MP0 14 its "SPL" slot is loaded with the key database, which the bootloader takes
    accepted = (comp, "PSP_KDB") if comp == "PSP_SPL" and self.dev.board.ip_version(am.MP0_HWID) < (14, 0, 0) else (comp,)
    mc = regs.get(f"{self.pref}_36") << 20
    ok = self.bl_ready and not self.sos_alive and comp is not None and any(self._msg1_holds(mc, c) for c in accepted)
    if events.enabled: events.emit("psp", self.dev.name, stage="bootloader", cmd=comp or f"0x{cmd:x}", accepted=ok)
    if not ok:
      self.bl_ready = False  # stuck: the driver's wait for bit 31 times out
      self.dev.log_refusal(f"PSP bootloader refused command 0x{cmd:x} ({comp})")
      return
    self.loaded_bl.append(comp)
    if comp == "PSP_SOS": self.sos_alive, self.ring_ctl = True, READY

  def _msg1_holds(self, mc:int, comp:str) -> bool:
    want = firmware.payload(self.sos_name, comp)
    return mc % (1 << 20) == 0 and self._fetch(mc, len(want)) == want

  def _fetch(self, addr:int, size:int) -> bytes|None:
    """What the PSP reads at addr: an MC address in the framebuffer, or (AM over USB, whose msg1 is system memory behind
    the bridge) a GPU VA the MM hub translates."""
    if self.dev.gmc.in_fb(addr, size): return self.dev.read_fb(addr, size)
    host = self.dev.gmc.host_of(addr, size, hub="MM")
    return None if host is None else ctypes.string_at(host, size)

  # *** the KM ring ***
  def _ring_control(self, value:int):
    regs, cmd = self.dev.regs, value >> 16
    if value == am.GFX_CTRL_CMD_ID_DESTROY_RINGS: self.ring, self.ring_ctl = None, READY if self.sos_alive else 0; return
    mc, size = regs.get(f"{self.pref}_69") | regs.get(f"{self.pref}_70") << 32, regs.get(f"{self.pref}_71")
    ok = self.sos_alive and self.ring is None and cmd == am.PSP_RING_TYPE__KM and mc % 0x1000 == 0 and self.dev.gmc.in_fb(mc, size)
    if events.enabled: events.emit("psp", self.dev.name, stage="ring", cmd="create", mc=mc, size=size, accepted=ok)
    if ok: self.ring, self.ring_ctl, self.wptr = (mc, size), READY, 0
    else: self.ring_ctl = READY | 0x1   # the sOS answers with an error in the low bits: AM's wait for 0x80000000 times out

  def _submit(self, new_wptr:int):
    if self.ring is None or new_wptr != self.wptr + FRAME // 4:
      self.dev.log_refusal(f"PSP ring write pointer 0x{new_wptr:x} (was 0x{self.wptr:x}, ring {'absent' if self.ring is None else 'live'})")
      return   # not one frame: the sOS ignores it and no fence is written
    mc, size = self.ring
    frame = am.struct_psp_gfx_rb_frame.from_buffer_copy(self.dev.read_fb(mc + (self.wptr * 4) % size, FRAME))
    self.wptr = new_wptr
    cmd_mc, fence_mc = frame.cmd_buf_addr_lo | frame.cmd_buf_addr_hi << 32, frame.fence_addr_lo | frame.fence_addr_hi << 32
    nbytes = ctypes.sizeof(am.struct_psp_gfx_cmd_resp)
    if not (self.dev.gmc.in_fb(cmd_mc, nbytes) and self.dev.gmc.in_fb(fence_mc, 4)):
      self.dev.log_refusal(f"PSP frame with command 0x{cmd_mc:x} / fence 0x{fence_mc:x} outside the framebuffer"); return
    cmd = am.struct_psp_gfx_cmd_resp.from_buffer_copy(self.dev.read_fb(cmd_mc, nbytes))
    status, what = self._command(cmd)
    if events.enabled: events.emit("psp", self.dev.name, stage="command", cmd=what, status=status)
    cmd.resp.status = status
    if cmd.cmd_id == am.GFX_CMD_ID_LOAD_TOC and status == 0: cmd.resp.tmr_size = TMR_SIZE
    self.dev.write_fb(cmd_mc, bytes(cmd))
    self.dev.write_fb(fence_mc, frame.fence_value.to_bytes(4, "little"))

  def _command(self, cmd) -> tuple[int, str]:
    name = am.enum_psp_gfx_cmd_id.get(cmd.cmd_id, f"0x{cmd.cmd_id:x}") if hasattr(am, "enum_psp_gfx_cmd_id") else f"0x{cmd.cmd_id:x}"
    if cmd.cmd_id == am.GFX_CMD_ID_LOAD_IP_FW: return self._load_ip_fw(cmd.cmd.cmd_load_ip_fw)
    if cmd.cmd_id == am.GFX_CMD_ID_LOAD_TOC:
      c = cmd.cmd.cmd_load_toc
      ok = self._payload_at(c.toc_phy_addr_lo | c.toc_phy_addr_hi << 32, c.toc_size, self.sos_name, "PSP_TOC")
      self.toc_loaded |= ok
      return (0 if ok else STATUS_INVALID), name
    if cmd.cmd_id == am.GFX_CMD_ID_SETUP_TMR:
      c = cmd.cmd.cmd_setup_tmr
      mc = c.buf_phy_addr_lo | c.buf_phy_addr_hi << 32
      ok = self.toc_loaded and c.buf_size >= TMR_SIZE and self.dev.gmc.in_fb(mc, c.buf_size)
      if ok: self.tmr = (mc, c.buf_size)
      return (0 if ok else STATUS_INVALID), name
    if cmd.cmd_id == am.GFX_CMD_ID_AUTOLOAD_RLC:
      need = {am.GFX_FW_TYPE_RS64_MEC, am.GFX_FW_TYPE_RLC_G, am.GFX_FW_TYPE_IMU_I, am.GFX_FW_TYPE_IMU_D}
      if self.gc >= (12, 0, 0): need |= {am.GFX_FW_TYPE_RS64_PFP, am.GFX_FW_TYPE_RS64_ME}
      ok = need <= set(self.loaded) and (self.tmr is not None or self.boot_time_tmr())
      if ok: self.autoloaded = True; self.dev.gfx.autoload_done(self.loaded)
      return (0 if ok else STATUS_INVALID), name
    return STATUS_INVALID, name   # a command the model does not implement is refused, never accepted silently

  def boot_time_tmr(self) -> bool: return self.dev.board.ip_version(am.MP0_HWID) in {(13, 0, 6), (13, 0, 14), (14, 0, 2), (14, 0, 3)}

  def _load_ip_fw(self, c) -> tuple[int, str]:
    fw_type = c.fw_type
    tname = am.enum_psp_gfx_fw_type.get(fw_type, f"0x{fw_type:x}")
    blob, piece = self.dev.firmware_piece(tname.removeprefix("GFX_FW_TYPE_"))
    ok = blob is not None and self._payload_at(c.fw_phy_addr_lo | c.fw_phy_addr_hi << 32, c.fw_size, blob, piece)
    if fw_type != am.GFX_FW_TYPE_SMU and not (self.tmr is not None or self.boot_time_tmr()): ok = False   # IP firmware lands in the TMR
    if ok: self.loaded[fw_type] = b""
    return (0 if ok else STATUS_INVALID), f"LOAD_IP_FW {tname}"

  def _payload_at(self, mc:int, size:int, blob:str, piece:str) -> bool:
    want = firmware.payload(blob, piece)
    return size == len(want) and self._fetch(mc, size) == want
