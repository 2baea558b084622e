"""The PTX layer. The ground floor imports nothing above it: syntax.py (a parsed module), parser.py (text into it,
with inline.py expanding device-function calls and validity.py rejecting what ptxas rejects), types.py (types and
number formats), layout.py (state-space windows, variable layout), blocks.py (basic blocks) and semantics.py (what each
instruction computes, one row per opcode). backends/ renders the table: numpy.py over every thread at once, c.py one
thread in C. The executor (mockgpu/emulators/ptx/) runs what they produce."""
