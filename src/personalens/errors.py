"""The one error type that reaches the user as a single line and exit status 2."""


class InputError(Exception):
    """Bad input from the user: a file, a record, a field, a spec or an option.

    The message names what is wrong and where; the CLI prints it as one line, without a
    traceback, and exits with status 2 before any run directory is written.
    """

    def __init__(self, message: str, *, where: str | None = None):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)
