"""What tinygrad's HCQ tests check on MOCKPCI (test/device/test_hcq.py, not in its wheel), written here against the mock
PCI function: signals written by either queue and waited on by the CPU or the GPU, the timeline crossing 2**32 and
its rollover, a CPU buffer mapped to the device (mlock and the pagemap's frames) and copied both ways by SDMA, and
peer copies both ways between two functions. Copies of tensors both ways and the disk-to-device copy are in
test_am.py (test_copies_cpu_buffers_disk_and_peers)."""
import pytest
from conftest import node_seed
from support.am import run

QUEUES = """
dev = Device["AMD"]
queues = {"compute": dev.hw_compute_queue_t, "copy": dev.hw_copy_queue_t}
"""

@pytest.mark.parametrize("dev", ["MOCKPCI+AMD", "MOCKPCI+AMD:LLVM:gfx1201"])
def test_signals_timeline_and_rollover(dev):
  """Each queue writes a signal the CPU waits for; a compute queue waits for a signal only the CPU sets (it does not
  pass before); the timeline is set near 2**32 on each queue (signals are 32-bit writes), and the next synchronize rolls
  it over (past 2**31 tinygrad swaps in its shadow timeline signal and restarts at 1): 40 waits and signals on the new
  timeline each pass, and ops after it are right."""
  tags, out = run(QUEUES + """
import time
for name, q in queues.items():
  sig = dev.new_signal(value=0)
  q().signal(sig, 0x9abc_def0).submit(dev)
  sig.wait(0x9abc_def0, timeout=5000)
  print(f"SIGNAL_{name}", sig.value == 0x9abc_def0)
gate = dev.new_signal(value=0)
dev.hw_compute_queue_t().wait(gate, 7).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
time.sleep(0.3)
print("HELD", dev.timeline_signal.value < dev.timeline_value - 1)
gate.value = 7
dev.synchronize()
print("RELEASED", dev.timeline_signal.value == dev.timeline_value - 1)
for name, q in queues.items():
  dev.timeline_value = (1 << 32) - 20   # past 2**31: the next synchronize rolls the timeline over
  q().signal(dev.timeline_signal, dev.timeline_value - 1).submit(dev)
  dev.timeline_signal.wait(dev.timeline_value - 1, timeout=5000)
  print(f"HIGH_{name}", dev.timeline_signal.value == (1 << 32) - 21)
  old = dev.timeline_signal
  for _ in range(40):
    q().wait(dev.timeline_signal, dev.timeline_value - 1).signal(dev.timeline_signal, dev.timeline_value).submit(dev)
    dev.timeline_value += 1
    dev.synchronize()
  print(f"ROLLED_{name}", dev.timeline_signal is not old and dev.timeline_value == 40 and dev.timeline_signal.value == 39)
fresh_op("AMD")
""", dev)
  for k in ("SIGNAL_compute", "SIGNAL_copy", "HELD", "RELEASED", "HIGH_compute", "HIGH_copy", "ROLLED_compute", "ROLLED_copy", "FRESH"):
    assert tags[k] == "True", (k, out)

def test_cpu_buffer_mapped_to_device_and_peer_copies(request):
  """A CPU device's buffer is mapped to the GPU (tinygrad mlocks it and reads its frames from the pagemap) and SDMA
  copies into and out of it; a buffer is copied AMD:0 -> AMD:1 -> AMD:0 (each reaches the other's VRAM through its
  BAR0) and both copies are exact."""
  seed = node_seed(request.node.nodeid)
  tags, out = run(QUEUES + f"""
from tinygrad.device import Buffer
from tinygrad import dtypes
from tinygrad.runtime.support import system
seen = {{"mlock": 0, "pagemap": 0}}
lock, paddrs = system.System.lock_memory, system.System.system_paddrs
system.System.lock_memory = lambda addr, size: (seen.__setitem__("mlock", seen["mlock"] + 1), lock(addr, size))[1]
system.System.system_paddrs = lambda addr, size: (seen.__setitem__("pagemap", seen["pagemap"] + 1), paddrs(addr, size))[1]
data = np.random.default_rng({seed}).integers(0, 256, 0x3000, dtype=np.uint8)
cpu = Buffer("CPU", 0x3000, dtypes.uint8).ensure_allocated()
cpu.allocator._copyin(cpu._buf, memoryview(data))
dev.allocator.map(cpu)
gpu = Buffer("AMD", 0x3000, dtypes.uint8).ensure_allocated()
dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(gpu._buf, cpu._buf, 0x3000) \\
  .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
dev.synchronize()
print("IN", np.array_equal(gpu.numpy(), data))
back = (Tensor(data, device="AMD") + 1).realize().uop.base.buffer
dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(cpu._buf, back._buf, 0x3000) \\
  .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
dev.synchronize()
print("OUT", np.array_equal(cpu.numpy(), data + 1))
print("LOCKED", seen["mlock"] >= 1 and seen["pagemap"] >= 1)
x = np.random.default_rng({seed + 1}).standard_normal(6000).astype(np.float32)
t = Tensor(x, device="AMD:0").realize()
there = t.to("AMD:1").realize()
print("PEER", np.array_equal((there.to("AMD:0").realize() * 2).numpy(), x * 2) and np.array_equal(there.numpy(), x))
fresh_op("AMD")
""")
  for k in ("IN", "OUT", "LOCKED", "PEER", "FRESH"): assert tags[k] == "True", (k, out)
