"""Random multi-op programs (tests/diff/diffprogram.py), drawn by hypothesis: chains of 3 to 8 ops with casts and mixed
dtypes, each run on every mock configuration and on DEV=CPU and compared bit for bit. Every step is live (its value
is compared, or feeds one that is), asserted per program, so each program has at least 3 live ops. Derandomized:
every run draws the same programs, and a failure shrinks to a short program."""
from hypothesis import given, settings, strategies as st, HealthCheck
import diffprogram as P
from diffcases import X
from support.diff_api import differential

@st.composite
def programs(draw):
  n = draw(st.sampled_from((1, 5, 8)))
  xs = [X((n, n), draw(st.sampled_from(P.DTYPES)), (-9, 9), None, salt) for salt in range(draw(st.integers(1, 3)))]
  steps, count = [], len(xs)
  for _ in range(draw(st.integers(3, 8))):
    src = st.integers(0, count - 1)
    kind = draw(st.sampled_from(("unary", "binary", "binary", "cast", "cast", "reduce", "move", "where")))
    if kind == "unary": steps.append(("unary", draw(st.sampled_from(P.UNARY)), draw(src)))
    elif kind == "binary": steps.append(("binary", draw(st.sampled_from(P.BINARY)), draw(src), draw(src)))
    elif kind == "cast": steps.append(("cast", draw(st.sampled_from(P.DTYPES)), draw(src)))
    elif kind == "reduce": steps.append(("reduce", draw(st.sampled_from(P.REDUCE)), draw(src), draw(st.integers(0, 1))))
    elif kind == "move": steps.append(("move", draw(st.sampled_from(P.MOVE)), draw(src)))
    else: steps.append(("where", draw(src), draw(src), draw(src)))
    count += 1
  return {"id": f"program{steps}", "op": "program", "x": xs, "kw": {"steps": steps}, "grad": False, "ctx": {}}

@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(programs())
def test_random_program(diff_runners, program):
  steps = program["kw"]["steps"]
  assert P.live_steps(steps, len(program["x"])) == len(steps) >= 3, steps
  failures = differential(diff_runners, [program])
  assert not failures, "\n".join(f"{dev}: {f}" for dev, fs in failures.items() for f in fs)

def test_liveness_counts_what_reaches_an_output():
  """A step whose value nothing reads is an output; one read only by a dead end still reaches it through that."""
  steps = [("unary", "neg", 0), ("binary", "add", 1, 0), ("cast", "int32", 0)]
  assert P.outputs(steps, 1) == [2, 3] and P.live_steps(steps, 1) == 3
  assert P.live_steps([("unary", "neg", 0)], 1) == 1
