"""What the debugger tests' child programs share (they run with tests/ as their working directory)."""

def element(inputs, addr:int) -> float:
  """The float32 element at device address addr of one of inputs, [(its base address, its numpy array)]."""
  for base, xn in inputs:
    if base <= addr < base + xn.nbytes: return float(xn.reshape(-1)[(addr - base) // 4])
  raise AssertionError(f"0x{addr:x} is in neither input")
