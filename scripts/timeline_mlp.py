"""The README's timeline picture: one tinygrad MLP training step (three Linear layers, SGD) on MOCK+AMD.

A first step compiles the kernels; the second is recorded through mockgpu's event bus (mockgpu.timeline.Recorder),
written as a trace-event file and drawn with `mockgpu timeline --png` (needs matplotlib).

  python scripts/timeline_mlp.py [--json OUT.json] [--png docs/timeline.png]
"""
import argparse, os, subprocess, sys, textwrap

STEP = textwrap.dedent("""
  import sys
  from tinygrad import Tensor, nn
  from tinygrad.helpers import Context
  from tinygrad.nn.optim import SGD
  from mockgpu import events, timeline
  Tensor.manual_seed(0)
  layers = [nn.Linear(256, 512), nn.Linear(512, 512), nn.Linear(512, 10)]
  opt = SGD(nn.state.get_parameters(layers), lr=0.01)
  x, y = Tensor.randn(64, 256).realize(), Tensor.randint(64, high=10).realize()
  def step():
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = layers[2](layers[1](layers[0](x).relu()).relu()).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss.item()
  step()  # compile every kernel first
  rec = timeline.Recorder()
  events.subscribe(rec)
  print("loss", step())
  events.unsubscribe(rec)
  timeline.write(sys.argv[1], rec.spans)
""")

def main() -> int:
  here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--json", default=os.path.join(here, "docs", "timeline.json"))
  ap.add_argument("--png", default=os.path.join(here, "docs", "timeline.png"))
  args = ap.parse_args()
  subprocess.run([sys.executable, "-c", STEP, args.json], env={**os.environ, "DEV": "MOCK+AMD"}, check=True)
  return subprocess.run([sys.executable, "-m", "mockgpu", "timeline", args.json, "--png", args.png]).returncode

if __name__ == "__main__": sys.exit(main())
