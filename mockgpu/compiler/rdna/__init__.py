"""The RDNA instruction sets, from the ground up: decode.py finds a kernel's code from its entry PC and splits it into
basic blocks (tinygrad's tables); semantics/ says what each instruction computes; errata.py where hardware departs from
the manual; backends/ turns a kernel's blocks into code (numpy, C). The executor (mockgpu/emulators/rdna/) runs it;
translations are cached by mockgpu.compiler.cache."""
