"""tiktoken's rules at the edges of text, for `Tokenizer`'s tiktoken names: bytes that are not
UTF-8 encoded as tiktoken's `_encode_bytes` encodes them, and where each decoded token starts in
characters, as its `decode_with_offsets` says. Plain functions over what the tokenizer hands
them (its chunks, ids and token bytes); they know no tokenizer and touch no engine.
"""

from collections.abc import Callable, Sequence

WHITESPACE_BYTES = b" \n\t"  # a token of these only may merge differently once more text follows


def encode_invalid_utf8(
    data: bytes,
    valid_up_to: int,
    encoded_chunks: Callable[[str], list[list[int]]],
    token_bytes: Callable[[int], bytes],
    encode_chunk_bytes: Callable[[bytes], list[int]],
) -> list[int]:
    """Ids for `data`, whose first `valid_up_to` bytes are UTF-8 and the next are not: the valid
    text is encoded (`encoded_chunks`: each of its chunks' ids); then the ids of its last chunk,
    with the whitespace tokens right before them, are taken back, and their bytes and the invalid
    rest are encoded as one chunk (`encode_chunk_bytes`: a token if they are one, else merged),
    as tiktoken guesses where the text would have been split."""
    chunk_ids = encoded_chunks(data[:valid_up_to].decode("utf-8"))
    ids = [token for chunk in chunk_ids for token in chunk]
    taken_back = len(chunk_ids[-1]) if chunk_ids else 0
    if taken_back and _is_whitespace(token_bytes(ids[-taken_back])):
        while taken_back < len(ids) and _is_whitespace(token_bytes(ids[-taken_back - 1])):
            taken_back += 1
    rest = data[valid_up_to:]
    if taken_back:
        rest = b"".join(token_bytes(token) for token in ids[-taken_back:]) + rest
        del ids[-taken_back:]
    ids.extend(encode_chunk_bytes(rest))
    return ids


def _is_whitespace(token: bytes) -> bool:
    return not token.strip(WHITESPACE_BYTES)


def character_offsets(token_bytes: Sequence[bytes]) -> list[int]:
    """Where each token starts in the characters of their UTF-8 joined: every byte but a
    continuation byte starts a character, and a token that starts with a continuation byte
    starts at the character it continues."""
    offsets: list[int] = []
    characters = 0
    for data in token_bytes:
        offsets.append(max(0, characters - (0x80 <= data[0] < 0xC0)))
        characters += sum(1 for byte in data if not 0x80 <= byte < 0xC0)
    return offsets
