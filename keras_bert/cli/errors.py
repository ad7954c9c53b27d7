"""The user-error type of the command line."""


class UserError(Exception):
    """A mistake in the command's input: reported in one line, exit code 2."""
