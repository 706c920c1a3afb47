"""Copying to the system clipboard, and knowing whether it worked.

A clipboard program (wl-copy, xclip, xsel, pbcopy, clip.exe) reports success;
the terminal escape OSC 52 does not: many terminals and tmux drop it silently.
So the App says "copied" only when a program took the text, and otherwise says
that it was sent to the terminal and offers saving instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess

# (program and arguments, environment variable that must be set, or "")
TOOLS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("wl-copy",), "WAYLAND_DISPLAY"),
    (("xclip", "-selection", "clipboard"), "DISPLAY"),
    (("xsel", "--clipboard", "--input"), "DISPLAY"),
    (("pbcopy",), ""),
    (("clip.exe",), ""),
)


def copy_with_tool(text: str) -> bool:
    """True when a clipboard program on this machine took ``text``."""
    for command, needs in TOOLS:
        if (needs and not os.environ.get(needs)) or shutil.which(command[0]) is None:
            continue
        try:
            subprocess.run(command, input=text.encode(), capture_output=True, timeout=3, check=True)
        except (OSError, subprocess.SubprocessError):
            continue
        return True
    return False
