"""What each RDNA instruction computes: one table per ISA family (rdna3.py), read by every backend."""
