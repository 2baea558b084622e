"""The arm64 CPU lane (DEV=MOCK+CPU): tinygrad's CPU kernels, compiled for arm64 by its own CLANG and LLVM renderers, run
in-process under unicorn (machine.py), checked when they load with capstone (lint.py). semantics.py is the numpy model
of the arm64 conversions that differ from x86 where C leaves the result undefined. The tinygrad side (the device class
and the one rebound module attribute) is mockgpu/driver/cpu.py.

unicorn and capstone are the optional extra `mockgpu[cpu]`; nothing here is imported unless DEV names MOCK+CPU."""
