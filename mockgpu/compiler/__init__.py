"""Kernel translation and caching, and discovery of the host toolchain tinygrad's AMD compilers need."""
