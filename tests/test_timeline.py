"""The timeline (MOCKGPU_TIMELINE): the trace-event file parsed back against what tinygrad launched, and its picture."""
import json
import pytest
from conftest import run_tinygrad
from support.trace_program import PROGRAM
from mockgpu import cli, timeline

@pytest.fixture(scope="module", params=["MOCK+AMD", "MOCK+NV"])
def run(request, tmp_path_factory):
  d = tmp_path_factory.mktemp("timeline")
  p = run_tinygrad(request.param, PROGRAM, env={"MOCKGPU_TIMELINE": str(d / "tl-%p.json")})
  info = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("INFO ")).split(" ", 1)[1])
  (path,) = d.glob("tl-*.json")  # %p: the file of the one process that ran
  return request.param, path, json.loads(path.read_text()), info

def test_kernel_spans_match_the_launches(run):
  dev, _, tl, info = run
  evs = tl["traceEvents"]
  assert all(e["ph"] in ("M", "X") for e in evs)
  kernels = [e for e in evs if e["ph"] == "X" and e["cat"] == "dispatch"]
  assert [e["name"] for e in kernels] == [l["name"] for l in info["launches"]]  # count, names and order
  assert all(e["args"]["instructions"] > 0 and e["dur"] > 0 for e in kernels)
  assert [e["args"]["grid"] for e in kernels] == [l["global"] for l in info["launches"]]
  assert len({(e["pid"], e["tid"]) for e in kernels}) == 1  # tinygrad runs its kernels on one compute queue

def test_tracks_are_named_and_spans_are_ordered(run):
  dev, _, tl, info = run
  evs = tl["traceEvents"]
  procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
  threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
  spans = [e for e in evs if e["ph"] == "X"]
  assert set(procs.values()) == {"AMD:0" if dev == "MOCK+AMD" else "NV:0"}
  assert {(e["pid"], e["tid"]) for e in spans} == set(threads)  # every span on a named track, every track used
  kernel_track = threads[(spans[[e["cat"] for e in spans].index("dispatch")]["pid"], next(e["tid"] for e in spans if e["cat"] == "dispatch"))]
  copy_tracks = {threads[(e["pid"], e["tid"])] for e in spans if e["cat"] == "copy"}
  assert ("PM4 queue" in kernel_track and copy_tracks == {"AMD:0 SDMA queue 1"}) if dev == "MOCK+AMD" else \
         ("channel" in kernel_track and all("channel" in t for t in copy_tracks) and kernel_track not in copy_tracks)
  for track in threads:  # a queue runs one thing at a time: its spans follow each other
    mine = [e for e in spans if (e["pid"], e["tid"]) == track]
    assert all(a["ts"] <= b["ts"] for a, b in zip(mine, mine[1:]))
  uploaded = sum(e["args"]["size"] for e in spans if e["cat"] == "copy" and info["va"] <= e["args"]["dst"] < info["va"] + info["size"])
  assert uploaded == info["size"]

def test_png(run, tmp_path):
  pytest.importorskip("matplotlib", reason="the picture needs matplotlib (pip install matplotlib), which mockgpu does not require")
  _, path, _, _ = run
  out = tmp_path / "t.png"
  assert cli.main(["timeline", str(path), "--png", str(out)]) == 0
  assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000

def test_trace_events_of_spans():
  spans = [{"kind": "dispatch", "ts": 5_000, "dur": 2_000, "pid": 1, "device": "AMD:0", "queue": "AMD:0 PM4 queue 0", "kernel": "E_4",
            "instructions": 9},
           {"kind": "copy", "ts": 1_000, "dur": 500, "pid": 1, "device": "AMD:0", "queue": "AMD:0 SDMA queue 1", "size": 64},
           {"kind": "wait", "ts": 2_000, "dur": 3_000, "pid": 1, "device": "AMD:0", "queue": "AMD:0 PM4 queue 0", "op": "WAIT_REG_MEM"}]
  evs = timeline.trace_events(spans)["traceEvents"]
  x = [e for e in evs if e["ph"] == "X"]
  assert [(e["name"], e["cat"], e["ts"], e["dur"]) for e in x] == [("copy 64 bytes", "copy", 0.0, 0.5), ("wait WAIT_REG_MEM", "wait", 1.0, 3.0),
                                                                   ("E_4", "dispatch", 4.0, 2.0)]
  assert x[2]["args"] == {"kernel": "E_4", "instructions": 9} and x[1]["tid"] == x[2]["tid"] != x[0]["tid"] and x[0]["pid"] == x[2]["pid"]
  assert [(e["name"], e["args"]["name"]) for e in evs if e["ph"] == "M"] == [("process_name", "AMD:0"), ("thread_name", "AMD:0 SDMA queue 1"),
                                                                             ("thread_name", "AMD:0 PM4 queue 0")]
