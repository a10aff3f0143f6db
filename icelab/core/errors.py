"""The exception types that reach the user as a single line, and the argument parser whose errors are one."""

from __future__ import annotations

import argparse
from typing import NoReturn


class UserError(Exception):
    """Bad input or a missing prerequisite: printed as one line, exit code 2, no traceback."""


class RunInterrupted(Exception):
    """Something outside the run ended it (its object store stopped answering): it ends
    `interrupted`, every measured row kept, with one line and exit status 3, no traceback."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2, like every bad input here: it raises
    UserError, which the command prints."""

    def error(self, message: str) -> NoReturn:
        raise UserError(message)
