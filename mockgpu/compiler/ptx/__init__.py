"""PTX text into fast Python: parser.py reads a module; codegen.py lays out a kernel's registers and blocks and
translates it, with ops.py / ops_alu.py emitting the numpy code of each instruction (calling the numeric, memory and
collective helpers of mockgpu/emulators/ptx/). The result is cached by mockgpu.compiler.cache."""
