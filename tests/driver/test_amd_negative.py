"""What tinygrad sees when something goes wrong on a mock AMD GPU: each error has its type and names its culprit, and
afterwards the process is alive and a fresh tensor op gives the right answer.

Policy (as with real KFD, which cannot recover a faulted queue): an error inside a queue stops that queue for good and
tinygrad puts that device into its error state. The mock itself stays healthy: the fresh op runs on the second GPU
(MOCKGPU_COUNT=2) of the same process. Errors that are not queue errors (an ioctl) leave the device usable.
"""
from conftest import run_tinygrad

SETUP = """
import ctypes, gc
import numpy as np
from tinygrad import Tensor, Device
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import pm4_nv as pm4
from tinygrad.runtime.ops_amd import KFDIface, AMDProgram
dev = Device["AMD:0"]
def report(fn):
  try: fn()
  except Exception as e:
    print("ERROR", type(e).__name__, "|", str(e).replace("\\n", " "))
  else: print("ERROR none")
def fresh_op(device):
  x = np.arange(256, dtype=np.float32)
  print("FRESH", np.array_equal((Tensor(x, device=device) * 3 + 1).numpy(), x * 3 + 1))
"""

def run(code:str) -> tuple[str, str, str, list[str]]:
  p = run_tinygrad("MOCK+AMD", SETUP + code, env={"MOCKGPU_COUNT": "2", "HCQDEV_WAIT_TIMEOUT_MS": "5000"})
  lines = p.stdout.splitlines()
  err = next(l for l in lines if l.startswith("ERROR ")).split(" ", 1)[1]
  kind, _, msg = err.partition(" | ")
  return kind, msg, next(l for l in lines if l.startswith("FRESH ")), lines

def test_unknown_ioctl():
  kind, msg, fresh, out = run("""
report(lambda: kfd.AMDKFD_IOC_SVM(KFDIface.kfd))
fresh_op("AMD:0")  # an ioctl error does not harm the device
""")
  assert kind == "UnsupportedIoctl" and "AMDKFD_IOC_SVM" in msg and "not modelled" in msg
  assert fresh == "FRESH True"

def test_unknown_pm4_opcode():
  kind, msg, fresh, out = run("""
q = dev.hw_compute_queue_t()
q.q(pm4.PACKET3(0xee, 1), 0, 0)
report(lambda: q.submit(dev))
print("BROKEN", dev.error_state is not None)  # tinygrad marks the device failed; KFD devices do not recover
fresh_op("AMD:1")
""")
  assert kind == "PacketError" and "AMD:0 PM4 queue 0" in msg and "ring offset 0x" in msg and "opcode 0xee" in msg
  assert "BROKEN True" in out and fresh == "FRESH True"

def test_truncated_pm4_packet():
  kind, msg, fresh, out = run("""
q = dev.hw_compute_queue_t()
q.q(pm4.PACKET3(pm4.PACKET3_RELEASE_MEM, 6), 0, 0)  # the header promises 7 body dwords, 2 are submitted
report(lambda: q.submit(dev))
fresh_op("AMD:1")
""")
  assert kind == "PacketError" and "AMD:0 PM4 queue 0" in msg and "RELEASE_MEM" in msg and "truncated packet" in msg
  assert fresh == "FRESH True"

def test_undefined_instruction_is_invalid():
  kind, msg, fresh, out = run("""
a = Tensor.ones(64).contiguous().realize()
assert (a + 1).tolist()[0] == 2
prg = [p for p in gc.get_objects() if isinstance(p, AMDProgram) and p.dev is dev and p.name.startswith("E_")][-1]
ctypes.c_uint32.from_address(prg.prog_addr).value = 0xbfff0000  # a SOPP word with no RDNA3 opcode, at the kernel's entry
report(lambda: (a + 1).tolist())
fresh_op("AMD:1")
""")
  assert kind == "InvalidInstruction" and "0xbfff0000" in msg and "PC 0x" in msg
  assert fresh == "FRESH True"

def test_kernel_reading_unmapped_memory_is_an_mmu_fault():
  kind, msg, fresh, out = run("""
a = Tensor.ones(1024).contiguous().realize()
buf = a.uop.buffer._buf
ids = (ctypes.c_uint32 * 1)(dev.iface.gpu_id)
kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU(KFDIface.kfd, handle=buf.meta.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)
print("VA", f"0x{buf.va_addr:X}")
report(lambda: (a + 1).tolist())  # the kernel reads a buffer the GPU no longer maps
fresh_op("AMD:1")
""")
  va = next(l for l in out if l.startswith("VA ")).split()[1]
  assert kind == "RuntimeError" and msg.startswith(f"MMU fault: {va} ") and "NotPresent=1" in msg
  assert fresh == "FRESH True"

def test_s_trap_is_a_queue_error_naming_kernel_pc_and_trap_id():
  """s_trap with no debugger attached: KFD's trap handler reports the wave's trap as a queue error, as a page fault is
  reported: the queue stops, tinygrad's wait sees the hardware-exception event, and the named error (kernel, PC, trap
  ID) is what the queue stopped with (mockgpu's log)."""
  p = run_tinygrad("MOCK+AMD", SETUP + """
a = Tensor.ones(64).contiguous().realize()
assert (a + 1).tolist()[0] == 2
prg = [p for p in gc.get_objects() if isinstance(p, AMDProgram) and p.dev is dev and p.name.startswith("E_")][-1]
ctypes.c_uint32.from_address(prg.prog_addr).value = 0xbf900007  # s_trap 7 at the kernel's entry
print("KERNEL", prg.name, f"0x{prg.prog_addr:x}")
report(lambda: (a + 1).tolist())
fresh_op("AMD:1")
""", env={"MOCKGPU_COUNT": "2", "HCQDEV_WAIT_TIMEOUT_MS": "5000"})
  lines = p.stdout.splitlines()
  kind, _, msg = next(l for l in lines if l.startswith("ERROR ")).split(" ", 1)[1].partition(" | ")
  _, name, pc = next(l for l in lines if l.startswith("KERNEL ")).split()
  assert kind == "RuntimeError" and msg.startswith("HW fault: "), msg
  assert "stopped: s_trap 7: the wave trapped (trap ID 7)" in p.stderr and f"at PC {pc} in kernel {name}" in p.stderr, p.stderr[-3000:]
  assert "FRESH True" in lines
