"""AMD GPU blocks beside the command processor: the performance monitor (perf.py: SQ/SPI/GRBM/GL2C registers, the
CP_PERFMON state machine, the thread-trace start/stop), its counters (pmc.py) and its thread traces (sqtt.py)."""
