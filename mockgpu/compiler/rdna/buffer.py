"""The RDNA3 buffer resource (V#, four SGPRs) of MUBUF instructions: its fields, the byte address each lane accesses
and whether the access is in range, for all waves at once (numpy arrays: a descriptor word per wave, a VGPR per lane).
The numpy backend (and so the stepper) calls address(); the C backend leaves buffer instructions to numpy.

V# layout (RDNA3 ISA manual, buffer resource): BASE_ADDRESS bits 47:0, STRIDE 61:48, SWIZZLE_ENABLE 63:62,
NUM_RECORDS 95:64; in the fourth dword ADD_TID_ENABLE bit 23 and OOB_SELECT bits 29:28.
Address: base + soffset + offset + stride * index, where offset = the instruction's OFFSET + the VGPR offset (OFFEN) and
index = the VGPR index (IDXEN) + the lane id (ADD_TID_ENABLE); with IDXEN and OFFEN both, VADDR is the index and
VADDR+1 the offset. Range checking, by OOB_SELECT (the soffset is not part of it): 0 index >= NUM_RECORDS or
offset + size > STRIDE; 1 index >= NUM_RECORDS; 2 NUM_RECORDS == 0; 3 (raw) stride * index + offset + size >
NUM_RECORDS. An access out of range loads 0, stores nothing and an atomic neither changes memory nor returns a value
other than 0. Multi-dword loads and stores are checked dword by dword, atomics as one word.
Not modelled (raises): SWIZZLE_ENABLE (the swizzled layout interleaves elements over INDEX_STRIDE indices)."""
from __future__ import annotations
import numpy as np

def fields(words) -> dict[str, np.ndarray]:
  """The V#'s fields from its four dwords (arrays, one element per wave), as int64 columns [waves, 1]."""
  w0, w1, w2, w3 = (np.asarray(w, np.int64).reshape(-1, 1) & 0xffffffff for w in words)
  return {"base": w0 | (w1 & 0xffff) << 32, "stride": (w1 >> 16) & 0x3fff, "swizzle": (w1 >> 30) & 3,
          "num_records": w2, "add_tid": (w3 >> 23) & 1, "oob": (w3 >> 28) & 3}

def out_of_range(f:dict, index:np.ndarray, offset:np.ndarray, size:int) -> np.ndarray:
  """Whether each lane's access of `size` bytes at (index, offset) is out of range, by the V#'s OOB_SELECT."""
  nr, stride, oob = f["num_records"], f["stride"], f["oob"]
  return np.select([oob == 0, oob == 1, oob == 2],
                   [(index >= nr) | (offset + size > stride), index >= nr, np.broadcast_to(nr == 0, index.shape)],
                   stride * index + offset + size > nr)

def address(words, vindex, voffset, soffset, inst_offset:int, idxen:bool, offen:bool, size:int, ndw:int, lanes:int):
  """(byte address of each lane's first element [waves, lanes] uint64, per element j < ndw the in-range mask,
  the waves whose V# enables swizzling (not modelled: the caller raises)). vindex/voffset: the VGPRs [waves, lanes]
  (None when not enabled); soffset: per wave."""
  f = fields(words)
  lane = np.arange(lanes, dtype=np.int64)[None, :]
  index = (np.asarray(vindex, np.int64) if idxen else 0) + f["add_tid"] * lane
  offset = (np.asarray(voffset, np.int64) if offen else 0) + inst_offset
  index, offset = np.broadcast_arrays(np.asarray(index, np.int64), np.asarray(offset, np.int64))
  index, offset = np.broadcast_to(index, (f["base"].shape[0], lanes)), np.broadcast_to(offset, (f["base"].shape[0], lanes))
  soff = np.asarray(soffset, np.int64).reshape(-1, 1) & 0xffffffff
  addr = ((f["base"] + soff + offset + f["stride"] * index) & 0xffffffffffff).astype(np.uint64)
  ok = [~out_of_range(f, index, offset + size * j, size) for j in range(ndw)]
  return addr, ok, f["swizzle"].reshape(-1) != 0
