"""Mininet custom file for `mn`: registers the oxflow switch and topology.

    mn --custom python/oxflow/mn_custom.py --switch oxflow ...

Registers the switch names `oxflow` (OxflowSwitch) and `ovsuser`
(UserOvsSwitch, Open vSwitch's user-space datapath in a private instance)
and the topology `spineleaf,SPINES,LEAVES,SERVERS` for Mininet's `mn`.
`mn` executes this file rather than importing it, so it puts the
repository's python/ directory on sys.path first.
"""

import os
import sys

# exec() gives no __file__, but the compiled code keeps its file name.
_here = os.path.dirname(os.path.abspath(sys._getframe().f_code.co_filename))
for _cand in (os.path.dirname(_here), os.path.join(os.getcwd(), "python")):
    if os.path.isdir(os.path.join(_cand, "oxflow")) and _cand not in sys.path:
        sys.path.insert(0, _cand)

from oxflow.mininet_switch import SWITCHES  # noqa: E402
from oxflow.dctopo import SpineLeafTopo  # noqa: E402

switches = dict(SWITCHES)
topos = {"spineleaf": SpineLeafTopo}
