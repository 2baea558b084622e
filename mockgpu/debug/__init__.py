"""The kernel debugger: breakpoints, stepping (forwards and backwards) and the state of a dispatch's waves, in process.

  import mockgpu.debug
  def at_stop(dbg, stop):
    dbg.step(20)
    print(mockgpu.debug.view.lane_table(dbg.target, 3, "f"))
  with mockgpu.debug.session(break_kernel="r_*", on_stop=at_stop) as dbg:
    (a @ b).realize()

`mockgpu debug [-ex CMD]... [--commands FILE] -- python prog.py` is the same as a command line (repl.py).

  target.py   the protocol an ISA adapter implements (DebugTarget) and the undo log's records
  amd.py      the RDNA adapter: a whole dispatch on the reference stepper, the executor's hook
  ptx_target.py  the PTX adapter: a whole launch on the PTX reference stepper (nv.py: the name session.py attaches)
  session.py  breakpoints, stops, step / reverse-step / reverse-continue / finish
  view.py     what a stop shows, as text
  buffers.py  tinygrad Buffers and Tensors to device addresses and back
  repl.py     the command language and `mockgpu debug`
"""
from mockgpu.debug.session import Session, Stop, Breakpoint, ConditionError, session
from mockgpu.debug import view

__all__ = ["Session", "Stop", "Breakpoint", "ConditionError", "session", "view"]
