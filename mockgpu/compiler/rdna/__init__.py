"""RDNA kernels into fast Python: decode.py finds a kernel's code from its entry PC and splits it into basic blocks
(tinygrad's RDNA3 tables); translate.py turns each block into Python source over numpy arrays, from the instruction
semantics in mockgpu/emulators/rdna/. The result is cached by mockgpu.compiler.cache."""
