"""The PTX backends: each renders the semantics table (compiler/ptx/semantics.py) in its language, numpy over every
thread of a batch (numpy.py) or C for one thread (c.py)."""
