"""Fuzz surface: NVIDIA RM escapes (/dev/nvidiactl, /dev/nvidia0: RM_ALLOC of every modelled class and random ones,
RM_CONTROL of every modelled command and random ones, RM_FREE, RM_MAP_MEMORY, RM_MAP_MEMORY_DMA, RM_ALLOC_MEMORY,
CARD_INFO, REGISTER_FD) and /dev/nvidia-uvm ioctls, with field-aware random arguments.

Handles are the worker's live ones (client, device, subdevice, memory, VA space, channel group) or random; parameter
pointers point into a user page followed by an unmapped guard page (the parameter struct at its start, or ending past
it), to an unmapped address or a small integer. Objects, clients and UVM ranges a case creates are freed after it.
"""
from __future__ import annotations
import ctypes, os
from tinygrad.runtime.autogen import nv_570 as nv
from harness import interesting
from userpages import guarded_page, inaccessible

NAME = "rm"
ENV = {"MOCKGPU_COUNT": "2", "MOCKGPU_NV_MODEL": "sm_89"}
HANDLES = ("client", "device", "subdevice", "mem", "vaspace", "group", "usermode", 0, "random")
POINTERS = ("params", "params", "params", "params_end", "unmapped", "small", 0)
CLASSES = [nv.NV01_ROOT_CLIENT, nv.NV01_DEVICE_0, nv.NV20_SUBDEVICE_0, nv.NV01_MEMORY_VIRTUAL, nv.FERMI_VASPACE_A, nv.FERMI_CONTEXT_SHARE_A,
           nv.KEPLER_CHANNEL_GROUP_A, nv.NV1_MEMORY_USER, nv.NV1_MEMORY_SYSTEM, nv.GT200_DEBUGGER, nv.AMPERE_CHANNEL_GPFIFO_A, nv.ADA_COMPUTE_A,
           nv.AMPERE_DMA_COPY_B, nv.TURING_USERMODE_A, nv.AMPERE_USERMODE_A, nv.BLACKWELL_COMPUTE_B]
ALLOC_PARAMS = {nv.NV01_DEVICE_0: nv.NV0080_ALLOC_PARAMETERS, nv.NV20_SUBDEVICE_0: nv.NV2080_ALLOC_PARAMETERS,
                nv.NV01_MEMORY_VIRTUAL: nv.NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, nv.FERMI_VASPACE_A: nv.NV_VASPACE_ALLOCATION_PARAMETERS,
                nv.FERMI_CONTEXT_SHARE_A: nv.NV_CTXSHARE_ALLOCATION_PARAMETERS, nv.NV1_MEMORY_USER: nv.NV_MEMORY_ALLOCATION_PARAMS,
                nv.NV1_MEMORY_SYSTEM: nv.NV_MEMORY_ALLOCATION_PARAMS, nv.GT200_DEBUGGER: nv.NV83DE_ALLOC_PARAMETERS,
                nv.AMPERE_CHANNEL_GPFIFO_A: nv.NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS}
w = None  # the worker's state

def fields(T, prefix:str="") -> list[tuple[str, type]]:
  """(dotted name, ctypes type) of every integer field of T, nested structures included (arrays stay zero)."""
  out = []
  for f in getattr(T, "_real_fields_", getattr(T, "_fields_", [])):
    name, t = prefix + f[0], f[1]
    if isinstance(t, type) and issubclass(t, ctypes.Structure): out += fields(t, name + ".")
    elif isinstance(t, type) and issubclass(t, ctypes._SimpleCData) and f[0] not in ("status", "rmStatus"): out.append((name, t))
  return out

def _value(rng, name:str, t:type):
  bits, leaf = 8 * ctypes.sizeof(t), name.rsplit(".", 1)[-1]
  if rng.random() < 0.1: return interesting(rng, bits)
  if leaf in ("hRoot", "hClient"): return rng.choice(("client",) * 6 + ("random", 0))
  if leaf.startswith("h") and leaf[1:2].isupper(): return rng.choice(HANDLES) if leaf != "hClass" else rng.choice(CLASSES + [rng.getrandbits(16)])
  if leaf == "cmd": return rng.choice(w_controls() + [rng.getrandbits(32)])
  if leaf.startswith("p") and leaf[1:2].isupper() or leaf in ("params", "classList", "grInfoList"): return rng.choice(POINTERS)
  if leaf in ("fd", "ctl_fd", "rmCtrlFd", "uvmFd"): return rng.choice(("ctlfd", "devfd", "uvmfd", -1, 99999))
  if leaf == "paramsSize": return rng.choice(("auto", "auto", "auto", 0, 8, 0x10000))
  if leaf in ("size", "length", "limit", "offset", "base", "dmaOffset"): return rng.choice((0, 0x1000, 0x2000, 0x200000, 0x10_0000_0000, 1 << 40))
  if leaf == "deviceId": return rng.choice((0, 0, 1, 2))
  return rng.getrandbits(bits) if rng.random() < 0.3 else rng.randrange(4)

_controls:list[int] = []
def w_controls() -> list[int]:
  if not _controls:
    from mockgpu.driver.nv_rm import RM
    _controls.extend(RM([]).controls)
  return _controls

def _escapes() -> dict:
  return {
    nv.NV_ESC_CARD_INFO: nv.nv_ioctl_card_info_t * 64, nv.NV_ESC_REGISTER_FD: nv.nv_ioctl_register_fd_t, nv.NV_ESC_RM_ALLOC: nv.NVOS21_PARAMETERS,
    nv.NV_ESC_RM_ALLOC_MEMORY: nv.nv_ioctl_nvos02_parameters_with_fd, nv.NV_ESC_RM_CONTROL: nv.NVOS54_PARAMETERS,
    nv.NV_ESC_RM_FREE: nv.NVOS00_PARAMETERS,
    nv.NV_ESC_RM_MAP_MEMORY: nv.nv_ioctl_nvos33_parameters_with_fd, nv.NV_ESC_RM_MAP_MEMORY_DMA: nv.NVOS46_PARAMETERS}

def _uvm_table() -> dict:
  return {nv.UVM_INITIALIZE: nv.UVM_INITIALIZE_PARAMS, nv.UVM_MM_INITIALIZE: nv.UVM_MM_INITIALIZE_PARAMS,
          nv.UVM_REGISTER_GPU: nv.UVM_REGISTER_GPU_PARAMS,
          nv.UVM_REGISTER_GPU_VASPACE: nv.UVM_REGISTER_GPU_VASPACE_PARAMS, nv.UVM_REGISTER_CHANNEL: nv.UVM_REGISTER_CHANNEL_PARAMS,
          nv.UVM_ENABLE_PEER_ACCESS: nv.UVM_ENABLE_PEER_ACCESS_PARAMS, nv.UVM_CREATE_EXTERNAL_RANGE: nv.UVM_CREATE_EXTERNAL_RANGE_PARAMS,
          nv.UVM_MAP_EXTERNAL_ALLOCATION: nv.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, nv.UVM_FREE: nv.UVM_FREE_PARAMS}

def _params_type(case) -> type|None:
  """The struct the escape's parameter pointer should hold (an RM_ALLOC's class parameters, an RM_CONTROL's)."""
  if case["nr"] == nv.NV_ESC_RM_ALLOC: return ALLOC_PARAMS.get(case["fields"].get("hClass"))
  if case["nr"] == nv.NV_ESC_RM_CONTROL:
    from mockgpu.driver.nv_rm import RM
    return RM([]).controls.get(case["fields"].get("cmd"), (None, None))[1]
  return None

def generate(rng, n:int) -> list:
  escapes, uvm = sorted(_escapes().items(), key=lambda e: e[0]), sorted(_uvm_table().items())
  weights = {nv.NV_ESC_RM_ALLOC: 4, nv.NV_ESC_RM_CONTROL: 4, nv.NV_ESC_RM_FREE: 2}
  esc_pool = [e for e in escapes for _ in range(weights.get(e[0], 1))]
  cases = []
  for _ in range(n):
    if rng.random() < 0.3:
      cmd, T = rng.choice(uvm) if rng.random() > 0.03 else (rng.getrandbits(8), None)
      f = {} if T is None else {k: _value(rng, k, t) for k, t in fields(T)}
      if T is not None and "gpuAttributesCount" in f: f["gpuAttributesCount"] = rng.choice((0, 1, 1, 2, 300))
      cases.append({"kind": "uvm", "nr": cmd, "fields": f, "uuid": rng.choice(("uuid0", "uuid1", "random"))})
      continue
    nr, T = rng.choice(esc_pool) if rng.random() > 0.03 else (rng.getrandbits(8), None)
    f = {} if T is None or not hasattr(T, "_fields_") else {k: _value(rng, k, t) for k, t in fields(T)}
    case = {"kind": "rm", "nr": nr, "fields": f, "node": rng.choice(("ctl", "ctl", "dev"))}
    PT = _params_type(case)
    case["pfields"] = {} if PT is None else {k: _value(rng, k, t) for k, t in fields(PT)}
    case["junk"] = rng.random() < 0.2  # the parameter page holds random bytes instead of zeros
    cases.append(case)
  return cases

class Worker:
  def __init__(self):
    import machines
    vfs = machines.machine().vfs
    self.ctl, self.dev, self.uvmf = vfs.open("/dev/nvidiactl", os.O_RDWR), vfs.open("/dev/nvidia0", os.O_RDWR), vfs.open("/dev/nvidia-uvm", os.O_RDWR)
    self.drv = self.ctl.drv
    self.rm, self.uvm = self.drv.rm, self.drv.uvm
    self.page = guarded_page(AREA)
    self.build()
    self.gpu = self.rm.gpus[0]
    self.uvm_call(nv.UVM_INITIALIZE, nv.UVM_INITIALIZE_PARAMS())
    self.uvm_call(nv.UVM_REGISTER_GPU, nv.UVM_REGISTER_GPU_PARAMS(gpu_uuid=nv.struct_nv_uuid(uuid=(ctypes.c_ubyte * 16)(*self.gpu.uuid))))
    self.counter = 0

  def build(self):
    """The worker's client and its objects, as tinygrad's NVDevice makes them (again, when a case freed one)."""
    self.client = self.rm.alloc(0, 0, 0, nv.NV01_ROOT_CLIENT, None)
    self.h = {"client": self.client}
    p = nv.NV0080_ALLOC_PARAMETERS(deviceId=0)
    self.h["device"] = self.rm.alloc(self.client, self.client, 0, nv.NV01_DEVICE_0, ctypes.addressof(p))
    self.h["subdevice"] = self.rm.alloc(self.client, self.h["device"], 0, nv.NV20_SUBDEVICE_0, None)
    m = nv.NV_MEMORY_ALLOCATION_PARAMS(size=0x200000)
    self.h["mem"] = self.rm.alloc(self.client, self.h["device"], 0, nv.NV1_MEMORY_USER, ctypes.addressof(m))
    self.h["vaspace"] = self.rm.alloc(self.client, self.h["device"], 0, nv.FERMI_VASPACE_A, None)
    self.h["group"] = self.rm.alloc(self.client, self.h["device"], 0, nv.KEPLER_CHANNEL_GROUP_A, None)
    self.h["usermode"] = self.rm.alloc(self.client, self.h["subdevice"], 0, nv.AMPERE_USERMODE_A, None)

  def uvm_call(self, cmd:int, p) -> int:
    self.uvmf.ioctl(cmd, p)
    return p.rmStatus

  def resolve(self, v, t:type):
    if isinstance(v, str):
      v = {"unmapped": inaccessible(), "small": 0x10, "random": 0x5a5a5a5a, "params": self.page, "ctlfd": self.ctl.fd, "devfd": self.dev.fd,
           "uvmfd": self.uvmf.fd}.get(v, None) if v not in self.h else self.h[v]
      if v is None: v = 0
    bits = 8 * ctypes.sizeof(t)
    return v % (1 << bits) if not issubclass(t, (ctypes.c_int, ctypes.c_long)) or v < 1 << (bits - 1) else v - (1 << bits)

AREA = 0x10000  # the parameter area: larger than every parameter struct (the biggest, the SM error states, is ~36 KiB)

def _set(obj, dotted:str, value, resolve):
  *path, leaf = dotted.split(".")
  for p in path: obj = getattr(obj, p)
  t = next(f[1] for f in getattr(type(obj), "_real_fields_", type(obj)._fields_) if f[0] == leaf)
  setattr(obj, leaf, resolve(value, t))

def setup():
  global w
  w = Worker()

def _fill_params(case):
  """The parameter page: zeros or junk, then the parameter struct's fields at its start (or ending past the page)."""
  ctypes.memmove(w.page, os.urandom(AREA) if case.get("junk") else bytes(AREA), AREA)
  PT = _params_type(case)
  if PT is None: return 0
  assert ctypes.sizeof(PT) <= AREA, PT
  p = PT.from_address(w.page)
  for k, v in case["pfields"].items(): _set(p, k, v, w.resolve)
  return ctypes.sizeof(PT)

def _rm(case):
  T = _escapes().get(case["nr"])
  size = _fill_params(case)
  arg = T() if T is not None else (ctypes.c_uint8 * 32)()
  for k, v in case["fields"].items():
    if v == "params_end": v = ("params", AREA - max(size // 2, 1))
    if isinstance(v, tuple): v = w.page + v[1]
    if v == "auto": v = size
    _set(arg, k, v, w.resolve)
  node = w.ctl if case["node"] == "ctl" else w.dev
  node.ioctl((3 << 30) | ((ctypes.sizeof(arg) & 0x3fff) << 16) | (ord("F") << 8) | case["nr"], arg)
  status = getattr(getattr(arg, "params", arg), "status", 0) if T is not None and hasattr(T, "_fields_") else 0
  return None if status == 0 else nv.nv_status_codes.get(status, f"NV status {status}")

def _uvm(case):
  T = _uvm_table().get(case["nr"])
  arg = T() if T is not None else (ctypes.c_uint8 * 32)()
  for k, v in case["fields"].items(): _set(arg, k, v, w.resolve)
  uuid = {"uuid0": w.gpu.uuid, "uuid1": w.rm.gpus[1].uuid}.get(case["uuid"], bytes(range(16)))
  for name in ("gpu_uuid", "gpuUuid", "gpuUuidA"):
    if T is not None and hasattr(arg, name): getattr(arg, name).uuid[:] = list(uuid)
  if T is not None and hasattr(arg, "perGpuAttributes"): arg.perGpuAttributes[0].gpuUuid.uuid[:] = list(uuid)
  w.uvmf.ioctl(case["nr"], arg)
  status = getattr(arg, "rmStatus", 0) if T is not None else 0
  return None if status == 0 else nv.nv_status_codes.get(status, f"NV status {status}")

def _snapshot():
  return (set(w.rm.clients), set(w.rm.clients[w.client].objects), set(w.uvm.ranges))


def _cleanup(before):
  """Free what the case created: new clients, new objects of our client (children first), new UVM ranges; our own
  objects a case freed are made again."""
  clients, objects, ranges = before
  for base in set(w.uvm.ranges) - ranges: w.uvm._free(None, nv.UVM_FREE_PARAMS(base=base))
  for c in set(w.rm.clients) - clients: w.rm.free(c, c, c)
  if (client:=w.rm.clients.get(w.client)) is None: return w.build()
  for h in sorted(set(client.objects) - objects, reverse=True):
    if (obj:=client.objects.get(h)) is not None: w.rm.free(w.client, obj.parent.handle, h)
  if set(w.h.values()) - set(client.objects):  # a case freed one of the worker's objects: start over with a new client
    w.rm.free(w.client, w.client, w.client)
    w.build()

def execute(case):
  before = _snapshot()
  try: return {"rm": _rm, "uvm": _uvm}[case["kind"]](case)
  finally: _cleanup(before)

def known_good() -> bool:
  """A fresh memory object mapped through UVM on GPU 0: a write from the host reads back through the GPU's address space,
  and GR_GET_INFO answers the board's SM version."""
  from mockgpu.driver.nv_rm import Memory
  w.counter += 1
  base = 0x20_0000_0000 + (w.counter % 1024) * 0x200000
  m = nv.NV_MEMORY_ALLOCATION_PARAMS(size=0x1000)
  h = w.rm.alloc(w.client, w.h["device"], 0, nv.NV1_MEMORY_SYSTEM, ctypes.addressof(m))
  try:
    if w.uvm_call(nv.UVM_CREATE_EXTERNAL_RANGE, nv.UVM_CREATE_EXTERNAL_RANGE_PARAMS(base=base, length=0x1000)) != 0: return False
    p = nv.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS(base=base, length=0x1000, hClient=w.client, hMemory=h, gpuAttributesCount=1)
    p.perGpuAttributes[0].gpuUuid.uuid[:] = list(w.gpu.uuid)
    if w.uvm_call(nv.UVM_MAP_EXTERNAL_ALLOCATION, p) != 0: return False
    mem = w.rm.get(w.client, h, Memory)
    ctypes.c_uint32.from_address(mem.host).value = 0x5a000000 | w.counter
    ok = w.gpu.mem.read_u32(base, "known good") == 0x5a000000 | w.counter
    info = nv.NV2080_CTRL_GR_INFO(index=nv.NV2080_CTRL_GR_INFO_INDEX_SM_VERSION)
    q = nv.NV2080_CTRL_GR_GET_INFO_PARAMS(grInfoListSize=1, grInfoList=ctypes.addressof(info))
    w.rm.control(w.client, w.h["subdevice"], nv.NV2080_CTRL_CMD_GR_GET_INFO, ctypes.addressof(q), ctypes.sizeof(q))
    return ok and info.data == w.gpu.board.sm_version
  finally:
    if base in w.uvm.ranges: w.uvm_call(nv.UVM_FREE, nv.UVM_FREE_PARAMS(base=base))
    w.rm.free(w.client, w.h["device"], h)
