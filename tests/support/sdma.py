"""An SDMA queue on a KFD client and the COPY_LINEAR packet.
(Moved from tests/emulators/test_sdma.py so that no test file imports another.)"""
from tinygrad.runtime.autogen import kfd
from tinygrad.runtime.autogen.am import sdma_6_0_0 as sdma
from support.kfd_client import Client, lohi
def sdma_queue():
  """A KFD SDMA queue on a fresh client with events, `q.c.buf` a 16 KiB VRAM buffer."""
  c = Client().events()
  c.buf = c.alloc(0x4000, kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
  return c.queue(kfd.KFD_IOC_QUEUE_TYPE_SDMA)

def copy(dst, src, n):
  return [sdma.SDMA_OP_COPY | sdma.SDMA_PKT_COPY_LINEAR_HEADER_SUB_OP(sdma.SDMA_SUBOP_COPY_LINEAR), sdma.SDMA_PKT_COPY_LINEAR_COUNT_COUNT(n - 1),
          0, *lohi(src), *lohi(dst)]
