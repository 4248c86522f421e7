"""The alphabet: base symbols with ids 0..A-1 and their labels. It knows nothing of domains."""

from typing import Final

MIN_ALPHABET: Final = 2
MAX_ALPHABET: Final = 1 << 17  # 8-mers of DNA (65,536) with tails and ambiguity letters fit


class Alphabet:
    """Base symbol labels in id order; labels are unique.

    >>> Alphabet(["A", "C", "G", "T"]).id_of("G")
    2
    """

    labels: list[str]
    ids: dict[str, int]

    def __init__(self, labels: list[str]) -> None:
        if not MIN_ALPHABET <= len(labels) <= MAX_ALPHABET:
            raise ValueError(f"an alphabet has {MIN_ALPHABET} to {MAX_ALPHABET} symbols, not {len(labels)}")
        self.labels = list(labels)
        self.ids = {}
        for index in range(len(labels)):
            label = labels[index]
            if label in self.ids:
                raise ValueError(f"alphabet label {label!r} appears twice (ids {self.ids[label]} and {index})")
            self.ids[label] = index

    def __len__(self) -> int:
        return len(self.labels)

    def id_of(self, label: str) -> int:
        symbol = self.ids.get(label, -1)
        if symbol < 0:
            raise KeyError(f"{label!r} is not in the alphabet")
        return symbol
