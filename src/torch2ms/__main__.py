import os
import sys

# `python -m torch2ms` (how editors start the language server, with the project folder as the
# working directory) puts that folder first on sys.path, so a project file named like a standard
# module (argparse.py, json.py, ast.py) would be imported, and run, instead of it. Scanning must
# never run the scanned code: drop that entry before importing anything else.
if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import main  # noqa: E402 - after the sys.path fix on purpose

sys.exit(main())
