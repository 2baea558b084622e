"""The GPU tinygrad's own AMD driver (AM) boots: DEV=MOCKPCI+AMD over the PCI function, GMMU=0 DEV=MOCKUSB+AMD behind
the ASM2464 bridge. device.py is the entry point; one file per IP block (see docs/ARCHITECTURE.md)."""
