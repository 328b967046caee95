"""oxflow Python helpers: OpenFlow 1.3 cross-checks against os-ken, controller
and test utilities for the oxflow switch."""
