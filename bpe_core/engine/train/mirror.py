"""A mirror: an involution on the base symbols (DNA: the complement) under which the corpus read
backwards is the corpus again, and its extension to merged tokens.

A token's mirror image is its base symbols reversed, each mirrored. The trainer learns each merge
with a partner right after it: a pair whose token is the first one's mirror image. The pair
(mirror[right], mirror[left]) always spells it, but where runs overlap, merging left to right
segments the two strands differently (`AAA` becomes `AA A`, `TTT` becomes `TT T`, so (T, TT)
hardly occurs): the partner is the spelling with the highest count, (mirror[right], mirror[left])
on ties. Taking the rare spelling would waste a token on a near-zero count and leave two ids with
one text. A merge whose token is its own mirror image has no partner. `Spellings` keeps each
token's base symbols and finds the pairs that spell a sequence; `mirror_tokens` checks that a
merge list has that shape and extends the mirror to its tokens. This module does not train.
"""

Spelling = tuple[int, ...]


class Spellings:
    """Each token's base symbols (`spelling[id]`), and which tokens a sequence of them spells
    (usually one; two merges can spell the same)."""

    mirror: list[int]
    spelling: list[Spelling]
    named: dict[Spelling, list[int]]

    def __init__(self, mirror: list[int]) -> None:
        self.mirror = list(mirror)
        self.spelling = [(symbol,) for symbol in range(len(mirror))]
        self.named = {(symbol,): [symbol] for symbol in range(len(mirror))}

    def add(self, left: int, right: int) -> None:
        """The next token id is the merge of `left` and `right`."""
        spelling = self.spelling[left] + self.spelling[right]
        self.named.setdefault(spelling, []).append(len(self.spelling))
        self.spelling.append(spelling)

    def image(self, left: int, right: int) -> Spelling:
        """The mirror image of what merging `left` and `right` makes."""
        spelling = self.spelling[left] + self.spelling[right]
        return tuple([self.mirror[spelling[index]] for index in range(len(spelling) - 1, -1, -1)])

    def pairs_spelling(self, spelling: Spelling) -> list[tuple[int, int]]:
        """Every pair of tokens whose base symbols, joined, are `spelling`."""
        found: list[tuple[int, int]] = []
        for cut in range(1, len(spelling)):
            for left in self.named.get(spelling[:cut], []):
                for right in self.named.get(spelling[cut:], []):
                    found.append((left, right))
        return found


def mirror_tokens(mirror: list[int], alphabet_size: int, merges: list[tuple[int, int]]) -> list[int]:
    """The involution `mirror` on the base symbols extended to the tokens these merges make
    (token alphabet_size + r for merge r): a ValueError unless it is an involution and each merge
    makes its own mirror image or is next to a merge that makes its mirror image."""
    if len(mirror) != alphabet_size:
        raise ValueError(f"mirror has {len(mirror)} entries for an alphabet of {alphabet_size}")
    for symbol in range(alphabet_size):
        other = mirror[symbol]
        if other < 0 or other >= alphabet_size or mirror[other] != symbol:
            raise ValueError(f"mirror is not an involution on 0..{alphabet_size - 1}: mirror[{symbol}] = {other}")
    spellings = Spellings(mirror)
    extended = list(mirror)
    rank = 0
    while rank < len(merges):
        for offset in range(2):
            if rank + offset < len(merges):
                left, right = merges[rank + offset]
                bound = alphabet_size + rank + offset
                if left < 0 or right < 0 or left >= bound or right >= bound:
                    raise ValueError(f"merge {rank + offset} ({left}, {right}) uses an id that no earlier merge made")
        left, right = merges[rank]
        token = alphabet_size + rank
        image = spellings.image(left, right)
        spellings.add(left, right)
        if image == spellings.spelling[token]:
            extended.append(token)
            rank += 1
            continue
        if rank + 1 < len(merges):
            next_left, next_right = merges[rank + 1]
            if spellings.spelling[next_left] + spellings.spelling[next_right] == image:
                spellings.add(next_left, next_right)
                extended.append(token + 1)
                extended.append(token)
                rank += 2
                continue
        raise ValueError(f"merge {rank} ({left}, {right}) is not followed by a merge that makes its mirror image")
    return extended
