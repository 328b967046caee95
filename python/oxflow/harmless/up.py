"""`oxflow harmless up --config FILE`: the HARMLESS manager's up
command (see oxflow.harmless.manager)."""

import sys

from oxflow.harmless.manager import main

if __name__ == "__main__":
    sys.exit(main("up"))
