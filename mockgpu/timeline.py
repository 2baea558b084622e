"""The timeline (MOCKGPU_TIMELINE=FILE): what each queue of each mock GPU did, as a Chrome/Perfetto trace-event file.

It listens to the event bus (events.py) for spans: `dispatch` (a kernel: its name and instruction count), `copy`
(SDMA COPY_LINEAR, the NVIDIA copy engine) and `wait` (a packet or semaphore acquire that had to wait). One process
per device (pid), one thread per queue (tid: a PM4 or SDMA queue, a GPFIFO channel, a CUDA stream), named by "M"
metadata events; spans are complete events (ph "X"), ts and dur in microseconds from the first span.

The file is written when the process exits (and by write()). Processes cannot share one JSON object: a `%p` in the
name is replaced by the process id, so that every process of a run (pytest-xdist workers) writes its own file;
without it, the last process to exit that ran anything on a mock GPU wins.

`mockgpu timeline FILE --png OUT` draws one with matplotlib (pip install matplotlib; it is not a dependency).
"""
from __future__ import annotations
import atexit, json, os
from mockgpu import config, events

SPANS = ("dispatch", "copy", "wait")
_recorder:list = []

class Recorder:
  def __init__(self): self.spans:list[dict] = []
  def __call__(self, ev:dict):
    if ev["kind"] in SPANS and "dur" in ev: self.spans.append(ev)

def start():
  """Record spans for MOCKGPU_TIMELINE and write the file at exit (once per process)."""
  if _recorder or not (path:=config.timeline()): return
  rec = Recorder()
  _recorder.append(rec)
  events.subscribe(rec)
  atexit.register(lambda: rec.spans and write(path.replace("%p", str(os.getpid())), rec.spans))

def span_name(ev:dict) -> str:
  if ev["kind"] == "dispatch": return ev.get("kernel", "kernel")
  if ev["kind"] == "copy": return f"copy {ev.get('size', 0)} bytes"
  return f"wait {ev.get('op', '')}".strip()

def trace_events(spans:list[dict]) -> dict:
  """The Chrome trace-event JSON object of the spans: {"traceEvents": [...], "displayTimeUnit": "ms"}."""
  t0 = min((s["ts"] for s in spans), default=0)
  pids:dict[str, int] = {}
  tids:dict[tuple[str, str], int] = {}
  out:list[dict] = []
  for s in sorted(spans, key=lambda s: s["ts"]):
    dev, queue = s.get("device") or f"process {s['pid']}", s.get("queue") or "host"
    if dev not in pids:
      pids[dev] = len(pids) + 1
      out.append({"ph": "M", "name": "process_name", "pid": pids[dev], "tid": 0, "args": {"name": dev}})
    if (dev, queue) not in tids:
      tids[(dev, queue)] = len(tids) + 1
      out.append({"ph": "M", "name": "thread_name", "pid": pids[dev], "tid": tids[(dev, queue)], "args": {"name": queue}})
    args = {k: v for k, v in s.items() if k not in ("kind", "ts", "dur", "pid", "device", "queue", "rsrc1", "rsrc2", "semaphore")}
    out.append({"ph": "X", "name": span_name(s), "cat": s["kind"], "ts": (s["ts"] - t0) / 1e3, "dur": s["dur"] / 1e3,
                "pid": pids[dev], "tid": tids[(dev, queue)], "args": args})
  return {"traceEvents": out, "displayTimeUnit": "ms"}

def write(path:str, spans:list[dict]):
  with open(path, "w") as f: json.dump(trace_events(spans), f, default=str)

COLORS = {"dispatch": "tab:blue", "copy": "tab:orange", "wait": "tab:gray"}

def _labelled(spans:list[dict], most:int=8) -> list[tuple[dict, int]]:
  """The longest kernels, each with a text row (0 or 1) where its label does not run into another's."""
  end = max((e["ts"] + e["dur"] for e in spans), default=1)
  room = end / 12  # about the width of one label
  placed:list[tuple[float, int]] = []
  out = []
  for e in sorted((e for e in spans if e["cat"] == "dispatch"), key=lambda e: -e["dur"])[:most]:
    mid = e["ts"] + e["dur"] / 2
    level = next((lv for lv in (0, 1) if all(abs(mid - m) > room for m, l in placed if l == lv)), None)
    if level is None: continue
    placed.append((mid, level))
    out.append((e, level))
  return out

def render_png(trace_file:str, png:str):
  """Draw a timeline file: one row per queue, a bar per span (kernels blue, copies orange, waits grey), the longest
  kernels labelled."""
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError:
    raise SystemExit("mockgpu timeline --png needs matplotlib: pip install matplotlib") from None
  with open(trace_file) as f: evs = json.load(f)["traceEvents"]
  procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
  rows = {(e["pid"], e["tid"]): f"{procs.get(e['pid'], e['pid'])} {e['args']['name'].removeprefix(procs.get(e['pid'], '') + ' ')}"
          for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
  order = sorted(rows)
  spans = [e for e in evs if e["ph"] == "X"]
  fig, ax = plt.subplots(figsize=(12, 1.2 + 0.8 * len(order)))
  for e in spans:
    y = order.index((e["pid"], e["tid"]))
    ax.broken_barh([(e["ts"] / 1e3, max(e["dur"] / 1e3, 1e-3))], (y - 0.3, 0.4), color=COLORS.get(e["cat"], "tab:green"))
  for e, level in _labelled(spans):
    ax.text((e["ts"] + e["dur"] / 2) / 1e3, order.index((e["pid"], e["tid"])) + 0.12 + 0.24 * level, e["name"], ha="center", va="top",
            fontsize=7)
  ax.set_ylim(len(order) - 0.3, -0.5)
  ax.set_yticks(range(len(order)), [rows[k] for k in order])
  ax.set_xlabel("ms")
  ax.set_title(f"{len(spans)} spans: kernels (blue), copies (orange), waits (grey)")
  fig.tight_layout()
  fig.savefig(png, dpi=110)
  plt.close(fig)
