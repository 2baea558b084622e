"""PM4 packet builders (SET_SH_REG, DISPATCH, RELEASE_MEM, WAIT_REG_MEM) and a recording stand-in executor.
(Moved from tests/emulators/test_pm4.py so that no test file imports another.)"""
import types
from tinygrad.runtime.autogen.am import pm4_nv as pm4
from mockgpu.errors import GPUPageFault
from support.kfd_client import pkt3, lohi
def release_mem(addr, value, data_sel, int_sel=0, ctxid=0):
  event = pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT) | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(5)
  sel = pm4.PACKET3_RELEASE_MEM_DATA_SEL(data_sel) | pm4.PACKET3_RELEASE_MEM_INT_SEL(int_sel)
  return pkt3(pm4.PACKET3_RELEASE_MEM, event, sel, *lohi(addr), *lohi(value), ctxid)

def wait_mem(addr, value, func=5, mask=0xffffffff):
  return pkt3(pm4.PACKET3_WAIT_REG_MEM, pm4.WAIT_REG_MEM_MEM_SPACE(1) | pm4.WAIT_REG_MEM_FUNCTION(func), *lohi(addr), value, mask, 4)

def set_sh(reg, *values): return pkt3(pm4.PACKET3_SET_SH_REG, reg.addr[0] - pm4.PACKET3_SET_SH_REG_START, *values)

class FakeExecutor:
  def __init__(self, fault=None): self.dispatches, self.fault = [], fault
  def module(self):
    return types.SimpleNamespace(Dispatch=lambda **kw: types.SimpleNamespace(**kw), run_dispatch=self.run)
  def run(self, mem, d):
    if self.fault is not None: raise GPUPageFault(self.fault, 4, False, "global_load_b32 at pc 0x40")
    self.dispatches.append(d)

def dispatch_cmds(gc, pgm, scratch, user, grid, local):
  return (set_sh(gc.regCOMPUTE_PGM_LO, *lohi(pgm >> 8)) + set_sh(gc.regCOMPUTE_PGM_RSRC1, 0x11, 0x22) + set_sh(gc.regCOMPUTE_PGM_RSRC3, 0x33) +
          set_sh(gc.regCOMPUTE_TMPRING_SIZE, 0x44) + set_sh(gc.regCOMPUTE_DISPATCH_SCRATCH_BASE_LO, *lohi(scratch >> 8)) +
          set_sh(gc.regCOMPUTE_USER_DATA_0, *user) + set_sh(gc.regCOMPUTE_START_X, 0, 0, 0, *local, 0, 0) +
          pkt3(pm4.PACKET3_DISPATCH_DIRECT, *grid, gc.regCOMPUTE_DISPATCH_INITIATOR.encode(cs_w32_en=1, force_start_at_000=1, compute_shader_en=1)))
