import sys
from mockgpu.cli import main
sys.exit(main())
