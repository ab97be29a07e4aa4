import sys

from servo_ff.cli import main

sys.exit(main())
