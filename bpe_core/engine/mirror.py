"""A mirror: an involution on the base symbols (DNA: the complement), under which a corpus read
backwards is the corpus again, and its extension to merged tokens.

The trainer learns each merge (x, y) with its partner (mirror[y], mirror[x]) right after it, so
the partners are each other's mirror, and a merge that is its own partner is its own mirror.
This module checks that a merge list has that shape; it does not train.
"""


def mirror_tokens(mirror: list[int], alphabet_size: int, merges: list[tuple[int, int]]) -> list[int]:
    """The involution `mirror` on the base symbols extended to the tokens these merges make
    (token alphabet_size + r for merge r): a ValueError unless it is an involution and each merge
    is its own partner or is next to its partner (mirror[right], mirror[left])."""
    if len(mirror) != alphabet_size:
        raise ValueError(f"mirror has {len(mirror)} entries for an alphabet of {alphabet_size}")
    for symbol in range(alphabet_size):
        image = mirror[symbol]
        if image < 0 or image >= alphabet_size or mirror[image] != symbol:
            raise ValueError(f"mirror is not an involution on 0..{alphabet_size - 1}: mirror[{symbol}] = {image}")
    extended = list(mirror)
    rank = 0
    while rank < len(merges):
        left, right = merges[rank]
        token = alphabet_size + rank
        if left < 0 or right < 0 or left >= token or right >= token:
            raise ValueError(f"merge {rank} ({left}, {right}) uses an id that no earlier merge made")
        partner = (extended[right], extended[left])
        if partner == (left, right):
            extended.append(token)
            rank += 1
        elif rank + 1 < len(merges) and merges[rank + 1] == partner:
            extended.append(token + 1)
            extended.append(token)
            rank += 2
        else:
            raise ValueError(f"merge {rank} ({left}, {right}) is not followed by its mirror partner {partner}")
    return extended
