"""`trainer.forbid` as the engine trainer's veto: which merged tokens training may not learn.

A pair is forbidden when the token it would make matches one of the patterns (`regex.search`, the
`regex` package's syntax, as everywhere in bpe-core). The pattern sees the token as text: for
byte-level text its bytes decoded as UTF-8 with errors="replace" (a token that ends inside a
character ends in U+FFFD); for any other alphabet its base labels joined with no separator
(`ACGT` for DNA, `Bar` `Position_0` as `BarPosition_0` for MIDI events).

The engine asks once per distinct pair (engine/trainer.py), so this keeps no answers, only each
token's bytes. It does not train, and does not check the patterns (config.py does).
"""

from collections.abc import Sequence

import regex


class TokenVeto:
    """Called with (left id, right id): True when their merged token matches a pattern.

    `merges` is the trainer's own list, which grows as it learns: token t >= len(alphabet) is
    merges[t - len(alphabet)], so a token's bytes can be made when it is first asked about."""

    def __init__(
        self, patterns: Sequence[str], alphabet: Sequence[str], byte_level: bool, merges: list[tuple[int, int]]
    ) -> None:
        self.patterns = [regex.compile(pattern) for pattern in patterns]
        self.merges = merges
        self.alphabet_size = len(alphabet)
        # byte-level symbols are the byte values; other labels are kept as UTF-8 (surrogatepass
        # both ways, so any label comes back as itself) to join them the same way
        self.errors = "replace" if byte_level else "surrogatepass"
        self.token_bytes = (
            [bytes([byte]) for byte in range(self.alphabet_size)]
            if byte_level
            else [label.encode("utf-8", "surrogatepass") for label in alphabet]
        )

    def text(self, left: int, right: int) -> str:
        """The text of the token (left, right) would make, as the patterns see it."""
        token_bytes = self.token_bytes
        while len(token_bytes) < self.alphabet_size + len(self.merges):
            first, second = self.merges[len(token_bytes) - self.alphabet_size]
            token_bytes.append(token_bytes[first] + token_bytes[second])
        return (token_bytes[left] + token_bytes[right]).decode("utf-8", self.errors)

    def __call__(self, left: int, right: int) -> bool:
        text = self.text(left, right)
        for pattern in self.patterns:
            if pattern.search(text) is not None:
                return True
        return False
