"""HARMLESS (hybrid legacy mode) tooling: the CAPEX calculator (`capex`),
an emulated legacy 802.1Q switch on a private Open vSwitch (`legacy_ovs`)
and a NAPALM driver for it (`napalm_ovslegacy`). docs/harmless.md,
docs/harmless-capex.md."""
