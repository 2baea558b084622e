"""A kernel body cut into basic blocks: at labels, after branches and before barriers. Both backends translate block
by block (the numpy backend schedules threads between them, the C backend makes each a label), and a barrier starting
a block is where every thread of the CTA meets."""
from __future__ import annotations
from mockgpu.compiler.ptx import syntax as P

BARRIERS = ("bar", "barrier")
ENDS_BLOCK = ("bra", "ret", "exit", "trap", "brx")

class Block:
  def __init__(self, index:int):
    self.index, self.instrs, self.labels = index, [], []

def split_blocks(body:list) -> list[Block]:
  blocks = [Block(0)]
  for st in body:
    cur = blocks[-1]
    if isinstance(st, P.Label):
      if cur.instrs: blocks.append(cur := Block(len(blocks)))
      cur.labels.append(st.name)
      continue
    if st.op in BARRIERS and cur.instrs: blocks.append(cur := Block(len(blocks)))
    cur.instrs.append(st)
    if st.op in ENDS_BLOCK: blocks.append(Block(len(blocks)))
  return blocks
