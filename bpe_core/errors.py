"""The one exception type users see: a message for a person, naming the file, line or key."""


class BpeError(Exception):
    """Bad input or configuration. The CLI prints `error: <message>` and exits with status 2."""
