"""An independent evaluator of the AMD ISA manual's pseudocode (tinygrad.runtime.autogen.amd.{rdna3,rdna4,cdna}.str_pcode)
and the conformance suite built on it. Nothing here imports mockgpu's instruction tables or numeric helpers: the
evaluator is the reference the executors are compared with.

  numbers.py    float formats, exact rounding (round to nearest even from an exact fraction), typed values
  parse.py      the pseudocode language: tokens, expressions, statements -> a small AST
  interp.py     the AST compiled to Python closures and run per lane (or once per wave for cross-lane ops)
  readings.py   what the suite compares with where the pseudocode is not what hardware does (errata) or is
                ambiguous or incomplete: replacement pseudocode per instruction, each with its reason
  operands.py   operand values (special and random) and the ISA's operand encodings (inline constants, literals)
  harness.py    assembling instructions into batched kernels, running them on both executor paths, comparing
  expected.py   expected_mismatches.txt (the triaged mismatches, classes a/b/c) and the strict check: the suite fails
                on a new mismatch and on a listed one that passes
"""
