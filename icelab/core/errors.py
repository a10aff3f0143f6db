"""The exception types that reach the user as a single line."""


class UserError(Exception):
    """Bad input or a missing prerequisite: printed as one line, exit code 2, no traceback."""


class RunInterrupted(Exception):
    """Something outside the run ended it (its object store stopped answering): it ends
    `interrupted`, every measured row kept, with one line and exit status 3, no traceback."""
