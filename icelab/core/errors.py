"""The one exception type that reaches the user as a single line."""


class UserError(Exception):
    """Bad input or a missing prerequisite: printed as one line, exit code 2, no traceback."""
