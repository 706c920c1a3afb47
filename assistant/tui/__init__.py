"""The Textual TUI. Only this package imports textual; the CLI imports it lazily.

``make_app`` builds the App for the CLI and the tests alike; ``run_tui`` runs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import UserError

if TYPE_CHECKING:
    from assistant.tui.app import DoctorApp

__all__ = ["make_app", "run_tui"]


def make_app(
    path: str | None = None,
    config_path: str | None = None,
    lang: str | None = None,
    redact: bool = False,
) -> DoctorApp:
    """The App; ``path`` is loaded as if pasted, ``config_path`` is read (never written).

    ``lang`` is "zh" or "en"; anything else follows the system locale. With ``redact``
    what ctrl+y copies and ctrl+s saves has host names, IPs, users and secrets masked.
    """
    from assistant.pipeline import system_lang
    from assistant.tui.app import DoctorApp

    chosen = lang if lang in ("zh", "en") else system_lang()
    return DoctorApp(path=path, config_path=config_path, lang=chosen, redact=redact)


def run_tui(
    path: str | None, config_path: str | None, lang: str | None, redact: bool = False
) -> int:
    """Run the TUI in this terminal; a missing PATH or config is a usage error (exit 2)."""
    for given, what in ((path, "log"), (config_path, "config")):
        if given is not None and not Path(given).expanduser().exists():
            raise UserError(f"{what} not found: {given}")
    from assistant.tui import pasteparse

    paste_safe = pasteparse.install()  # a paste with colour codes arrives whole, not as keys
    app = make_app(path, config_path, lang, redact)
    app.paste_safe = paste_safe
    app.run()
    return app.return_code or 0
