"""Kernel-driver models: AMD KFD and its sysfs, NVIDIA RM and UVM, the CUDA driver API."""
