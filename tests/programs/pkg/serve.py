"""The serving program as a module of a package, for `kinspect run -m pkg.serve`."""

import os
import runpy
import sys

print(f"module argv0={os.path.basename(sys.argv[0])} path0={sys.path[0] == os.getcwd()}")
runpy.run_path(os.path.join(os.path.dirname(__file__), os.pardir, "serve.py"), run_name="serve")
