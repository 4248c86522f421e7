"""The one exception type users see: a message for a person, naming the file, line or key."""


class BpeError(Exception):
    """Bad input or configuration. The CLI prints `error: <message>` and exits with status 2."""


def located(where: str, message: str) -> str:
    """`where: message`, unless the message already starts by naming that place (a pretokenizer
    that names the record, say), so no location is said twice."""
    return message if message.startswith((f"{where}:", f"{where},")) else f"{where}: {message}"
