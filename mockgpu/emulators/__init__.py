"""Device models: command processors (PM4, SDMA, NVIDIA GPFIFO and class methods) and instruction-set executors."""
