"""copy_from_user / copy_to_user: every user pointer a driver model reads or writes goes through here.

A driver model runs in the runtime's own process, so a garbage pointer in an ioctl argument (WAIT_EVENTS' events_ptr, an
RM control's params, a CUDA call's name buffer) would be a host segfault if it were dereferenced with ctypes. The real
kernel copies such memory with copy_from_user/copy_to_user, which answer EFAULT for a range that is not mapped (or not
writable). Here the copy is a process_vm_readv/process_vm_writev on our own pid: the kernel checks every page and
fails cleanly, and it honours page protections as copy_to_user does. Where a sandbox forbids those calls, reads and
writes of /proc/self/mem take their place (they fail cleanly too, but a write there also succeeds on a read-only page).

Errors are OSError(EFAULT) naming what was copied; the KFD model lets it through as the ioctl's errno, the RM model
turns it into NV_ERR_INVALID_ADDRESS, the CUDA model into CUDA_ERROR_INVALID_VALUE.
"""
from __future__ import annotations
import ctypes, errno, os
from mockgpu.hostmem import iovec as _iovec, libc as _libc

USER_END = 1 << 47  # x86-64 user space: anything above is a kernel address, EFAULT without looking
MAX_COPY = 1 << 30  # one copy larger than this is an argument error, not a copy

_use_vm_calls = True
_mem_fd:tuple[int, int]|None = None  # (pid, fd): /proc/self/mem of the process that opened it (a forked child reopens)

def fault(addr:int, size:int, what:str) -> OSError:
  return OSError(errno.EFAULT, f"{os.strerror(errno.EFAULT)}: {what}: 0x{addr % 2**64:x}+0x{size:x} is not mapped user memory")

def _check(addr:int, size:int, what:str):
  if not isinstance(addr, int) or not isinstance(size, int) or size < 0 or size > MAX_COPY or addr <= 0 or addr + size > USER_END:
    raise fault(addr if isinstance(addr, int) else 0, size if isinstance(size, int) else 0, what)

def _mem() -> int:
  global _mem_fd
  if _mem_fd is None or _mem_fd[0] != os.getpid(): _mem_fd = (os.getpid(), os.open("/proc/self/mem", os.O_RDWR | os.O_CLOEXEC))
  return _mem_fd[1]

def _vm_call(fn, local:int, remote:int, size:int) -> bool|None:
  """True: copied; False: the remote range faulted; None: the call is not available here."""
  global _use_vm_calls
  lo, re = _iovec(local, size), _iovec(remote, size)
  n = fn(os.getpid(), ctypes.byref(lo), 1, ctypes.byref(re), 1, 0)
  if n == size: return True
  if n < 0 and ctypes.get_errno() in (errno.ENOSYS, errno.EPERM):
    _use_vm_calls = False
    return None
  return False

CHUNK = 1 << 30  # one process_vm_readv/writev moves at most ~2 GiB

def _raw(fn, local:int, remote:int, size:int, what:str, write:bool):
  """Move size bytes between our memory at `local` and user memory at `remote` (write: to the user)."""
  if not isinstance(remote, int) or size < 0 or remote <= 0 or remote + size > USER_END:
    raise fault(remote if isinstance(remote, int) else 0, size, what)
  for off in range(0, size, CHUNK):
    n = min(CHUNK, size - off)
    if _use_vm_calls and (ok:=_vm_call(fn, local + off, remote + off, n)) is not None:
      if not ok: raise fault(remote, size, what)
      continue
    try:
      if write: done = os.pwrite(_mem(), ctypes.string_at(local + off, n), remote + off)
      else:
        data = os.pread(_mem(), n, remote + off)
        done = len(data)
        ctypes.memmove(local + off, data, done)
    except OSError: raise fault(remote, size, what) from None
    if done != n: raise fault(remote, size, what)

def copy_from_user_into(local:int, addr:int, size:int, what:str):
  """Copy `size` bytes from user address `addr` into our memory at `local` (a buffer the model owns); EFAULT."""
  _raw(_libc.process_vm_readv, local, addr, size, what, False)

def copy_to_user_from(addr:int, local:int, size:int, what:str):
  """Copy `size` bytes of our memory at `local` to user address `addr`; EFAULT."""
  _raw(_libc.process_vm_writev, local, addr, size, what, True)

def copy_from_user(addr:int, size:int, what:str) -> bytes:
  """`size` bytes at user address `addr`, or OSError(EFAULT)."""
  _check(addr, size, what)
  if size == 0: return b""
  buf = ctypes.create_string_buffer(size)
  if _use_vm_calls and (ok:=_vm_call(_libc.process_vm_readv, ctypes.addressof(buf), addr, size)) is not None:
    if not ok: raise fault(addr, size, what)
    return buf.raw
  try: data = os.pread(_mem(), size, addr)
  except OSError: raise fault(addr, size, what) from None
  if len(data) != size: raise fault(addr, size, what)
  return data

def copy_to_user(addr:int, data:bytes, what:str):
  """Write `data` at user address `addr`, all of it or nothing visible beyond a fault; OSError(EFAULT) on a fault."""
  _check(addr, len(data), what)
  if not data: return
  buf = ctypes.create_string_buffer(bytes(data), len(data))
  if _use_vm_calls and (ok:=_vm_call(_libc.process_vm_writev, ctypes.addressof(buf), addr, len(data))) is not None:
    if not ok: raise fault(addr, len(data), what)
    return
  try: n = os.pwrite(_mem(), bytes(data), addr)
  except OSError: raise fault(addr, len(data), what) from None
  if n != len(data): raise fault(addr, len(data), what)

PROBE_LIMIT = 1 << 16  # ranges up to this size are checked by copying them; larger ones a byte per page

def check_user(addr:int, size:int, what:str, write:bool=False):
  """Check that [addr, addr+size) is mapped (and writable, with write=True, for ranges up to PROBE_LIMIT) without
  changing it; OSError(EFAULT). A large range (memory the driver pins: a user pointer buffer, an OS descriptor) is
  checked as get_user_pages refuses one: every page mapped (mincore fails on a range with a hole), the first and last
  pages readable. Probing a byte per page faulted each one in: 1.6 ms per 2 MiB buffer, 50 ms of tinygrad's device
  open on MOCK+AMD. Not modelled: a PROT_NONE mapping strictly inside a large range (the kernel's EFAULT)."""
  if size <= PROBE_LIMIT:
    data = copy_from_user(addr, size, what)
    # writes back what was there: a no-op on memory that did not change meanwhile, which the process's own heap can
    # (the probe allocates): a range the driver only reads is read (copy_from_user), never probed so (KFD WAIT_EVENTS)
    if write: copy_to_user(addr, data, what)
    return
  if addr <= 0 or addr + size > USER_END: raise fault(addr, size, what)
  first, last = addr & ~0xfff, (addr + size - 1) & ~0xfff
  if _libc.mincore(first, last + 0x1000 - first, ctypes.create_string_buffer((last - first) // 0x1000 + 1)) != 0:
    raise fault(addr, size, what)
  copy_from_user(addr, 1, what)
  copy_from_user(last, 1, what)

def user_struct(T:type, addr:int, what:str, write:bool=True):
  """The ctypes struct (or array type) T at user address addr, after checking the whole of it is mapped (and writable
  when the driver writes results into it): a live view the handler reads and fills like the kernel's copy in/out."""
  check_user(addr, ctypes.sizeof(T), what, write)
  return T.from_address(addr)

def user_cstring(addr:int, what:str, limit:int=1 << 24) -> bytes:
  """The NUL-terminated string at addr (without its NUL), read a page at a time so it never reads past a mapped page;
  EFAULT if it runs into unmapped memory or past `limit` bytes."""
  _check(addr, 1, what)
  out, pos = bytearray(), addr
  while len(out) < limit:
    chunk = copy_from_user(pos, min(0x1000 - pos % 0x1000, limit - len(out)), what)
    if (nul:=chunk.find(b"\0")) >= 0: return bytes(out + chunk[:nul])
    out += chunk
    pos += len(chunk)
  raise OSError(errno.EFAULT, f"{os.strerror(errno.EFAULT)}: {what}: no NUL in the {limit} bytes at 0x{addr:x}")
