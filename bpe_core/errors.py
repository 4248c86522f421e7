"""The exception types users see: a message for a person, naming the file, line or key."""


class BpeError(Exception):
    """Bad input or configuration. The CLI prints `error: <message>` and exits with status 2."""


class WrongTokenizer(BpeError):
    """Ids (a shard set, an ids file) read with a tokenizer other than the one that made them, or
    counts trained with another config: the message names both; `--force` (`force=True`) reads
    them anyway where that can make sense."""


def located(where: str, message: str) -> str:
    """`where: message`, unless the message already starts by naming that place (a pretokenizer
    that names the record, say), so no location is said twice."""
    return message if message.startswith((f"{where}:", f"{where},")) else f"{where}: {message}"
