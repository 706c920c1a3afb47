"""areal-doctor: offline diagnosis of out-of-memory crashes in AReaL RL training."""

__version__ = "0.1.0"
