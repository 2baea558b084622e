"""The code that runs RDNA kernels, generated from the semantics table: numpy.py (all waves of a dispatch at once,
with its runtime numpy_runtime.py and numpy_memory.py) and c.py (one wave at a time, with c/prelude.c)."""
