import sys

from kinspect.cli import main

sys.exit(main())
