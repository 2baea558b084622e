"""Virtual files: the device nodes and sysfs trees the mock answers for.

Driver models register what they own: plain files (text or a callable producing it), directories (implicit, from the
files under them) and device nodes (opened into a Handle with ioctl/mmap). A path answers virtually only when it lies
under a registered root (`claim`); everything else goes to the real OS. Under a claimed root, a missing path is
ENOENT, like the kernel.
"""
from __future__ import annotations
import errno, itertools, os
from typing import Callable

class Handle:
  """An open virtual file. Device models subclass it for ioctl and mmap."""
  _fds = itertools.count(1 << 20)  # fake fd numbers far above anything the OS hands out
  def __init__(self, path:str, flags:int=os.O_RDONLY):
    self.path, self.flags, self.fd, self.pos = path, flags, next(Handle._fds), 0
  def ioctl(self, request:int, arg) -> int: raise OSError(errno.ENOTTY, f"{self.path}: not a device (ioctl 0x{request:x})")
  def mmap(self, start:int, size:int, prot:int, flags:int, offset:int) -> int:
    raise OSError(errno.ENODEV, f"{self.path}: cannot be mapped")
  def read(self, size:int|None=None, offset:int|None=None) -> bytes: raise OSError(errno.EINVAL, f"{self.path}: cannot be read")
  def write(self, data:bytes, offset:int|None=None): raise OSError(errno.EACCES, f"{self.path}: read-only")
  def close(self): pass

class FileHandle(Handle):
  def __init__(self, path:str, flags:int, content:Callable[[], bytes], on_write:Callable[[bytes], None]|None):
    super().__init__(path, flags)
    self.content, self.on_write = content, on_write
  def read(self, size=None, offset=None):
    data = self.content()
    start = self.pos if offset is None else offset
    chunk = data[start:] if size is None else data[start:start+size]
    self.pos = start + len(chunk)
    return chunk
  def write(self, data, offset=None):
    if self.on_write is None: raise OSError(errno.EACCES, f"{self.path}: read-only")
    self.on_write(data)

class DirHandle(Handle):
  def read(self, size=None, offset=None): raise OSError(errno.EISDIR, f"{self.path}: is a directory")

class VFS:
  def __init__(self):
    self.roots:list[str] = []
    self.files:dict[str, tuple[Callable[[], bytes], Callable|None]] = {}
    self.devices:dict[str, Callable[[str, int], Handle]] = {}
    self.dirs:dict[str, set[str]] = {}
    self.deferred:list[tuple[tuple[str, ...], Callable[[], None]]] = []

  # *** registration ***
  def claim(self, root:str): self.roots.append(root.rstrip("/"))
  def defer(self, roots:list[str], install:Callable[[], None]):
    """The roots a driver's install() claims, with the install run at the first lookup under one of them (before the
    lookup answers): a process that never looks there never builds that driver."""
    self.deferred.append((tuple(r.rstrip("/") for r in roots), install))
  def _wake(self, p:str):
    for entry in [e for e in self.deferred if any(p == r or p.startswith(r + "/") for r in e[0])]:
      self.deferred.remove(entry)
      entry[1]()
  def add_file(self, path:str, content:str|bytes|Callable[[], str|bytes], on_write:Callable[[bytes], None]|None=None):
    getter = content if callable(content) else (lambda c=content: c)
    self.files[path] = (lambda: _b(getter()), on_write)
    self._add_parents(path)
  def add_device(self, path:str, opener:Callable[[str, int], Handle]):
    self.devices[path] = opener
    self._add_parents(path)
  def _add_parents(self, path:str):
    parent, name = os.path.split(path)
    while parent and parent != "/":
      kids = self.dirs.setdefault(parent, set())
      if name in kids: return  # so are its ancestors (the sysfs topology registers ~600 files)
      kids.add(name)
      parent, name = os.path.split(parent)

  # *** lookup ***
  def owns(self, path:str) -> bool:
    p = os.path.normpath(path)
    if self.deferred: self._wake(p)
    return any(p == r or p.startswith(r + "/") or (r.endswith("*") and p.startswith(r[:-1])) for r in self.roots)
  def exists(self, path:str) -> bool:
    p = os.path.normpath(path)
    if self.deferred: self._wake(p)
    return p in self.files or p in self.devices or p in self.dirs
  def open(self, path:str, flags:int) -> Handle:
    p = os.path.normpath(path)
    if self.deferred: self._wake(p)
    if p in self.devices: return self.devices[p](p, flags)
    if p in self.files: return FileHandle(p, flags, *self.files[p])
    if p in self.dirs: return DirHandle(p, flags)
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
  def listdir(self, path:str) -> list[str]:
    p = os.path.normpath(path)
    if self.deferred: self._wake(p)
    if p not in self.dirs: raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return sorted(self.dirs[p])
  def readlink(self, path:str) -> str:
    """No mock path is a symbolic link: EINVAL for one that exists, ENOENT otherwise, as readlink(2) says."""
    code = errno.EINVAL if self.exists(path) else errno.ENOENT
    raise OSError(code, os.strerror(code), path)

def _b(x) -> bytes: return x if isinstance(x, bytes) else str(x).encode()
