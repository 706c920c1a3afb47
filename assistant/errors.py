"""Errors that reach the user as one line and a contract exit code."""

EXIT_FOUND = 0
EXIT_NOT_FOUND = 1
EXIT_USAGE = 2


class UserError(Exception):
    """Bad input or usage: printed as one line on stderr, exit code 2."""

    exit_code = EXIT_USAGE


class KnowledgeError(Exception):
    """A file in knowledge/ is missing or malformed (a packaging or editing bug)."""
