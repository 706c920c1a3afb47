"""Reading, checking and patching the user's AReaL experiment YAML.

Public API:
  load_config(path) -> ExperimentConfig
  check_config(config, *, lang="en", known=None) -> list[ConfigWarning]
  patched_text(config, flat_patch) -> str
  unified_diff(config, new_text) -> str
  write_atomic(target, text, *, config_path, force=False) -> None
  check_target(target, *, config_path, force=False) -> Path  (what write_atomic refuses)
"""

from assistant.config.constraints import check_config
from assistant.config.loader import ExperimentConfig, config_from_text, load_config
from assistant.config.patch import check_target, patched_text, unified_diff, write_atomic

__all__ = [
    "ExperimentConfig",
    "check_config",
    "check_target",
    "config_from_text",
    "load_config",
    "patched_text",
    "unified_diff",
    "write_atomic",
]
