import sys

from ropespec.cli import main

sys.exit(main())
