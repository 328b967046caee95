"""`oxflow harmless down --config FILE`: the HARMLESS manager's down
command (see oxflow.harmless.manager)."""

import sys

from oxflow.harmless.manager import main

if __name__ == "__main__":
    sys.exit(main("down"))
