"""The machine (mockgpu/system.py) is passed down, not reached up to: two machines live side by side in one process and
share nothing (files, devices, queues, doorbell watches, executors); the executors' reports reach the process-wide
launch counters through the event bus."""
import pytest
import machines
from mockgpu import events, system
from mockgpu.errors import GPUPageFault, ListenerFailed
from support.kfd_client import Client
from support.pm4 import FakeExecutor, dispatch_cmds, release_mem, wait_mem

@pytest.fixture(autouse=True)
def one_gpu(monkeypatch): monkeypatch.setenv("MOCKGPU_COUNT", "1")

def test_two_machines_share_no_files_devices_or_queues():
  a, b = machines.build(), machines.build()
  assert a.vfs is not b.vfs and a.devices["amd"][0] is not b.devices["amd"][0]
  assert a.devices["amd"][0].machine is a and b.devices["amd"][0].machine is b
  ca, cb = Client(machine=a).events(), Client(machine=b).events()
  assert ca.drv is not cb.drv and ca.gpu.mem is not cb.gpu.mem
  qa = ca.queue()
  assert [q.queue_id for q in a.queues] == [qa.desc.queue_id] and b.queues == []
  doorbell = qa.doorbells + (qa.desc.doorbell_offset & 0x1fff)
  assert a.watcher(doorbell, 8) is not None and b.watcher(doorbell, 8) is None

def test_a_queue_runs_only_on_its_own_machine():
  a, b = machines.build(), machines.build()
  ca = Client(machine=a).events()
  ca.buf = ca.alloc(0x1000)
  q = ca.queue()
  q.submit(wait_mem(ca.buf.va, 5) + release_mem(ca.buf.va + 8, 99, 1))
  ca.buf.u32()[0] = 5
  b.kick()  # the other machine has no queue waiting on that memory
  assert ca.buf.u32()[2] == 0 and q.rptr == 0
  a.kick()
  assert ca.buf.u32()[2] == 99 and q.rptr == q.put

def test_each_device_runs_the_executor_it_was_built_with():
  ra, rb = FakeExecutor(), FakeExecutor()
  a, b = system.System(rdna=ra.module()), system.System(rdna=rb.module())
  from mockgpu.driver import kfd
  for m in (a, b): kfd.install(m)
  clients = {m: Client(machine=m).events() for m in (a, b)}
  for m, pgm in ((a, 0x1000), (b, 0x2000), (a, 0x3000)):
    c = clients[m]
    c.queue().submit(dispatch_cmds(c.gpu.gc, pgm, 0, [1], (1, 1, 1), (32, 1, 1)))
  assert [d.pgm_addr for d in ra.dispatches] == [0x1000, 0x3000] and [d.pgm_addr for d in rb.dispatches] == [0x2000]

def test_an_executor_stands_in_on_one_machine_only(monkeypatch):
  monkeypatch.setattr(machines, "current", None)
  other = machines.build()
  rec = FakeExecutor()
  machines.stand_in(monkeypatch, rec.module())
  assert machines.machine().devices["amd"][0].executor is not other.devices["amd"][0].executor
  assert isinstance(other.devices["amd"][0].executor, system.Executor)

def test_the_launch_counters_listen_to_the_executors_reports(monkeypatch):
  """system.stats counts what the executors notify (events.notify): a launch's groups and instructions, and a C or numpy
  launch when the kernel is handed to its path, before it runs."""
  monkeypatch.setattr(system, "stats", type(system.stats)())
  # only the counters hear these made-up reports (coverage's listener would fail on them: ListenerFailed)
  monkeypatch.setattr(events, "_listeners", {"kernel_ran": [system._count_native], "launch": [system._count_launch]})
  events.notify("kernel_ran", isa="testisa", native=True)
  events.notify("kernel_ran", isa="testisa", native=False)
  events.notify("launch", isa="testisa", groups=3, instructions=40, seconds=0.5, thread_instructions=None)
  events.notify("launch", isa="testisa", groups=1, instructions=2, seconds=0.25, thread_instructions=64)
  assert dict(system.stats) == {"testisa.native_launches": 1, "testisa.numpy_launches": 1, "testisa.launches": 2, "testisa.groups": 4,
                                "testisa.instructions": 42, "testisa.seconds": 0.75, "testisa.thread_instructions": 64}

def test_a_listener_hears_only_its_kind_and_one_that_raises_is_named():
  """A listener that raises is a bug in mockgpu: ListenerFailed names it and the report's kind, its cause is the
  listener's exception, and the listener is not dropped (a silently removed coverage listener emptied later records)."""
  heard = []
  def bad(r): raise ValueError("broken listener")
  events.listen("test_kind", heard.append)
  events.listen("test_kind", bad)
  try:
    events.notify("other_kind", x=1)
    with pytest.raises(ListenerFailed, match=r"listener '.*bad' failed on a test_kind report: ValueError: broken listener") as e:
      events.notify("test_kind", x=2)
    assert isinstance(e.value.__cause__, ValueError) and bad in events._listeners["test_kind"]
    with pytest.raises(ListenerFailed): events.notify("test_kind", x=3)
  finally:
    events.unlisten("test_kind", heard.append)
    events.unlisten("test_kind", bad)
  assert heard == [{"kind": "test_kind", "x": 2}, {"kind": "test_kind", "x": 3}]

def test_an_interceptor_runs_a_launch_in_the_executors_place():
  """events.intercept: the first interceptor that returns a result has run the launch; None leaves it to the next and
  then to the executor; an interceptor's exception is the launch's outcome and propagates."""
  seen = []
  def decline(*a): seen.append(("decline", a))
  def take(*a): return ("ran", a)
  def fail(*a): raise GPUPageFault(0x10, 4, False)
  assert events.intercepted("test_launch", 1) is None
  events.intercept("test_launch", decline)
  events.intercept("test_launch", take)
  try:
    assert events.intercepting("test_launch") == [decline, take]
    assert events.intercepted("test_launch", 1, 2) == ("ran", (1, 2)) and seen == [("decline", (1, 2))]
    events.unintercept("test_launch", take)
    events.intercept("test_launch", fail)
    with pytest.raises(GPUPageFault): events.intercepted("test_launch", 3)
  finally:
    for fn in (decline, take, fail): events.unintercept("test_launch", fn)
  assert events.intercepting("test_launch") == [] and events.intercepted("test_launch", 4) is None
