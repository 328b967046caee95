"""`oxflow harmless status --config FILE`: the HARMLESS manager's status
command (see oxflow.harmless.manager)."""

import sys

from oxflow.harmless.manager import main

if __name__ == "__main__":
    sys.exit(main("status"))
