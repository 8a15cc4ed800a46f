import sys

from pglab.cli import main

sys.exit(main())
