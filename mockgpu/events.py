"""The event bus: drivers, devices and executors say what happened here; the tracer (trace.py) and the timeline
(timeline.py) listen, and the debugger intercepts launches (`intercept`, below).

Executors report on a second channel, `notify`: their own kinds (`launch`, `kernel_ran`, `kernel_rejected`,
schemas at notify()) go only to the listeners of that kind (`listen`), whether or not a tracer
subscribes, and never to the trace (the devices' `dispatch` events say the same). The launch counters
(system.py) and instruction coverage (coverage.py) listen there, so an executor returns its stats and reports nothing
upward. A listener that raises is a bug in mockgpu: notify raises ListenerFailed naming it (the listener stays).

A third channel, `intercept`, lets one party run a launch in the executor's place: the debugger (mockgpu/debug/)
intercepts `rdna_dispatch`, `ptx_launch` and `cpu_call` while a session is entered. The executor offers each launch
(`intercepted`) after its checks; the first interceptor that returns a result has run it (its stats come back), None
leaves it to the executor. An interceptor's exception is the launch's own outcome (a page fault on the stepper) and
propagates. Nobody intercepts unless a session is entered: one dict lookup per launch.

An event is a plain dict: `kind`, `ts` (time.monotonic_ns() when it began), `pid`, `device` and `queue` (None where
they do not apply), then the kind's own fields (the README's trace schema). Spans (dispatches, copies, waits) carry
`dur` in nanoseconds and `ts` at their start.

Emitting costs nothing while nobody listens: emitters on hot paths check the module flag `enabled` before they build
their fields (`if events.enabled: events.emit(...)`). Subscribers are called in order, synchronously, in the thread
that emitted; one that raises is logged on the mockgpu logger and removed, so a broken listener cannot break a run.
"""
from __future__ import annotations
import errno, os, time
from typing import Callable
from mockgpu.errors import ListenerFailed

from mockgpu import log
enabled = False  # True while any subscriber listens; emitters check it before building an event's fields
_subscribers:list[Callable[[dict], None]] = []

def subscribe(fn:Callable[[dict], None]):
  """Call fn(event) for every event from now on."""
  global enabled
  if fn not in _subscribers: _subscribers.append(fn)
  enabled = True

def unsubscribe(fn:Callable[[dict], None]):
  global enabled
  if fn in _subscribers: _subscribers.remove(fn)
  enabled = bool(_subscribers)

_listeners:dict[str, list[Callable[[dict], None]]] = {}  # kind -> the listeners of the executors' reports of that kind

def listen(kind:str, fn:Callable[[dict], None]):
  """Call fn(report) for every notify() of `kind` from now on."""
  if fn not in (fns:=_listeners.setdefault(kind, [])): fns.append(fn)

def unlisten(kind:str, fn:Callable[[dict], None]):
  if fn in (fns:=_listeners.get(kind, [])): fns.remove(fn)

def notify(kind:str, **fields):
  """An executor's report to the listeners of its kind: a plain dict with `kind` and these fields.
    launch           isa ("rdna3", ..., "ptx"), groups (waves or threads), instructions (wave- or warp-instructions),
                     seconds, thread_instructions (PTX: summed over the threads; None for RDNA)
    kernel_ran       isa, native (handed to the kernel's C translation), and the kernel: RDNA code, ftz32, ftz16, lanes;
                     PTX kernel (a PTXKernel). Sent before the kernel runs, so a launch that faults in C counts as one C ran
    kernel_rejected  isa, text, error: a PTX module that does not translate
  A listener that raises is a bug in mockgpu (the counters and coverage are its own): ListenerFailed names it and the
  report's kind, with the listener's exception as its cause. Unlike the bus's subscribers it is not removed: a
  listener dropped silently left later reports uncounted."""
  if not (fns:=_listeners.get(kind)): return
  fields["kind"] = kind  # the keyword dict is this call's own: it is the report
  for fn in fns[:]:
    try: fn(fields)
    except Exception as e:
      raise ListenerFailed(f"mockgpu listener {getattr(fn, '__qualname__', fn)!r} failed on a {kind} report: {type(e).__name__}: {e}") from e

_interceptors:dict[str, list[Callable]] = {}  # kind -> who may run such a launch in the executor's place (the debugger)

def intercept(kind:str, fn:Callable):
  """Offer every launch of `kind` to fn(*args) from now on (after those already intercepting): it returns the launch's
  stats when it ran it, None to leave it to the executor."""
  if fn not in (fns:=_interceptors.setdefault(kind, [])): fns.append(fn)

def unintercept(kind:str, fn:Callable):
  if fn in (fns:=_interceptors.get(kind, [])): fns.remove(fn)

def intercepting(kind:str) -> list[Callable]: return list(_interceptors.get(kind, ()))

def intercepted(kind:str, *args):
  """Offer a launch to the interceptors of its kind: the first result that is not None (the launch ran there), else None.
    rdna_dispatch  (mem, d): an RDNA dispatch (emulators/rdna/dispatch.Dispatch); returns its DispatchStats
    ptx_launch     (mem, k, grid, block, params, dynamic_shared): a PTX launch; returns its LaunchStats
    cpu_call       (program, args, bufs, cores): an arm64 lane's Program call (driver/cpu.py); returns True when it ran"""
  for fn in _interceptors.get(kind, ()):
    if (out:=fn(*args)) is not None: return out
  return None

def now() -> int: return time.monotonic_ns()

def emit(kind:str, device:str|None=None, queue:str|None=None, ts:int|None=None, **fields):
  """Send one event to every subscriber. ts: when it began (default now)."""
  if not enabled: return
  ev = {"kind": kind, "ts": now() if ts is None else ts, "pid": os.getpid(), "device": device, "queue": queue, **fields}
  for fn in list(_subscribers):
    try: fn(ev)
    except Exception:
      log.exception("mockgpu event subscriber %r failed on a %s event; it is unsubscribed", fn, kind)
      unsubscribe(fn)

def fault(device:str|None, queue:str|None, err:Exception):
  """A `fault` event: a GPU page fault's report (GPUPageFault.fields()) or another error that stopped a queue (a budget
  stop, an unsupported instruction): its type and message."""
  if not enabled: return
  fields = err.fields() if hasattr(err, "fields") else {}
  emit("fault", device, queue, error=type(err).__name__, message=str(err), **fields)

def fields_of(st) -> dict:
  """A ctypes struct's integer and nested-struct fields by name (the decoded form of an ioctl argument or RM parameter
  block); arrays of integers become lists, byte arrays hex text."""
  out = {}
  for f in getattr(st, "_real_fields_", None) or getattr(st, "_fields_", []):
    name = f[0]
    if name.startswith("_"): continue
    try: v = getattr(st, name)
    except (AttributeError, ValueError): continue
    out[name] = _value(v)
  return out

def _value(v, depth:int=0):
  if isinstance(v, (int, float, str)) or v is None: return v
  if isinstance(v, bytes): return v.rstrip(b"\0").decode(errors="replace") if v.rstrip(b"\0").isascii() else v.hex()
  if hasattr(v, "_length_"):  # a ctypes array
    items = list(v)
    if items and isinstance(items[0], int):
      while items and items[-1] == 0: items.pop()  # trailing zeros of fixed-size tables say nothing
      return items
    return [_value(x, depth + 1) for x in items[:64]] if depth < 3 else f"<{len(items)} items>"
  if hasattr(v, "_fields_") or hasattr(v, "_real_fields_"): return fields_of(v) if depth < 3 else f"<{type(v).__name__}>"
  if hasattr(v, "value"): return _value(v.value, depth)
  return repr(v)

def ioctl(interface:str, name:str, arg, run:Callable, device:str|None=None, after:Callable[[], dict]|None=None):
  """Run an ioctl's handler (run(), which fills arg in place) and emit an `ioctl` event: arg decoded before (args_in)
  and after (args_out), the result (0, or the errno name of the OSError it raised) and what after() adds."""
  if not enabled: return run()
  t0, before = now(), fields_of(arg)
  try: ret = run()
  except OSError as e:
    emit("ioctl", device, ts=t0, dur=now() - t0, interface=interface, name=name, args_in=before, args_out=None,
         result=errno.errorcode.get(e.errno, e.errno), error=str(e), **(after() if after else {}))
    raise
  emit("ioctl", device, ts=t0, dur=now() - t0, interface=interface, name=name, args_in=before, args_out=fields_of(arg), result=0,
       **(after() if after else {}))
  return ret
