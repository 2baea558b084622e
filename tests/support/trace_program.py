"""The tinygrad program the trace and timeline tests run.
(Moved from tests/test_trace.py so that no test file imports another.)"""
# what tinygrad launched, how big its first buffer is and where it lives: the reference every check compares with
PROGRAM = """
import json, numpy as np
from tinygrad import Tensor, Device
from tinygrad.runtime.support.hcq import HCQProgram
launches = []
_call = HCQProgram.__call__
def call(self, *bufs, global_size=(1,1,1), local_size=(1,1,1), **kw):
  launches.append({"name": self.name, "global": list(global_size), "local": list(local_size)})
  return _call(self, *bufs, global_size=global_size, local_size=local_size, **kw)
HCQProgram.__call__ = call
a = Tensor(np.arange(1 << 20, dtype=np.float32)).realize()
b = (a * 2 + 1).sum().realize()
c = (a.reshape(1024, 1024) + 1).realize()
b.item()
buf = a.uop.base.buffer._buf
print("INFO " + json.dumps({"launches": launches, "va": int(buf.va_addr), "size": int(buf.size)}))
"""
