"""The tracer (MOCKGPU_TRACE): every event of the bus (events.py), as JSON lines or as one human line each.

MOCKGPU_TRACE=FILE (any value but 0 and 1) appends one JSON object per event to FILE. Every process appends to the
same file (pytest-xdist workers, tinygrad's subprocesses): each line is written with one write() on a descriptor
opened with O_APPEND, so lines from several processes interleave whole, and each carries its `pid`. The file is never
truncated: remove it before a run you want alone in it.

MOCKGPU_TRACE=1 writes the same events to stderr, one line each (`mockgpu: <ms since start> <kind> <device>
<queue>: field=value ...`), through mockgpu's own logger ("mockgpu"); the root logger is never configured.
"""
from __future__ import annotations
import json, os, sys
from mockgpu import config, events

_started:list = []

def start():
  """Subscribe the tracer MOCKGPU_TRACE asks for and the timeline MOCKGPU_TIMELINE asks for (once per process)."""
  if config.timeline():
    from mockgpu import timeline
    timeline.start()
  if _started or not (setting:=config.trace()): return
  fn = _stderr_tracer() if setting == "1" else JSONLines(setting)
  _started.append(fn)
  events.subscribe(fn)

class JSONLines:
  def __init__(self, path:str): self.path, self.fd = path, None
  def __call__(self, ev:dict):
    if self.fd is None: self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    os.write(self.fd, (json.dumps(ev, default=_json_default, separators=(",", ":")) + "\n").encode())
  def __repr__(self): return f"JSONLines({self.path!r})"

def _json_default(x):
  if isinstance(x, (bytes, bytearray)): return x.hex()
  if isinstance(x, (tuple, set, frozenset)): return list(x)
  if hasattr(x, "item"): return x.item()  # numpy scalars
  return repr(x)

def _stderr_tracer():
  import logging
  log = logging.getLogger("mockgpu")  # the logger itself, not mockgpu.log's deferral: one call per event
  if not any(getattr(h, "_mockgpu_trace", False) for h in log.handlers):
    h = logging.StreamHandler(sys.stderr)
    h.setFormatter(logging.Formatter("mockgpu: %(message)s"))
    h._mockgpu_trace = True
    log.addHandler(h)
  log.setLevel(logging.DEBUG)
  t0 = events.now()
  def tracer(ev:dict): log.debug("%s", human(ev, t0))
  return tracer

def human(ev:dict, t0:int=0) -> str:
  """One line for an event: time in ms since t0, kind, device and queue, then its fields."""
  head = f"{(ev['ts'] - t0) / 1e6:10.3f} {ev['kind']:<10}"
  where = " ".join(str(x) for x in (ev.get("device"), ev.get("queue")) if x)
  body = " ".join(f"{k}={_show(v)}" if k != "dur" else f"dur={v / 1e3:.1f}us" for k, v in ev.items()
                  if k not in ("kind", "ts", "pid", "device", "queue") and v is not None)
  return f"{head} {where + ': ' if where else ''}{body}"

def _show(v) -> str:
  if isinstance(v, bool) or v is None: return str(v)
  if isinstance(v, int): return f"0x{v:x}" if v > 0xffff else str(v)
  if isinstance(v, dict): return "{" + ", ".join(f"{k}={_show(x)}" for k, x in v.items()) + "}"
  if isinstance(v, (list, tuple)): return "[" + ", ".join(_show(x) for x in v) + "]"
  if isinstance(v, float): return f"{v:.6g}"
  return repr(v) if isinstance(v, str) and (" " in v or "\n" in v) else str(v)
