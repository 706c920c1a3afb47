"""The TUI's widgets, one module each; they show state and post messages."""
