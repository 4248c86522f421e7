"""Lists of token ids: checked for ids out of range or repeated, and packed as one bytes object
and back.

`check_ids` is the common case of an id layout's check (`formats.layout`), which a vocabulary
of 200,000 ids meets on every load: one pass over the list and a bitmap, where a Python set of the
ids would cost a hash table of megabytes, built afresh by each process.

Packing is how a worker process hands a batch's ids to the process that asked for them
(`runners.local.WorkerPool`). Unpickling the lists, or an `array`'s `tolist`, makes a new int
object per id; here the receiving side writes each id as an int object shared by all its
occurrences, and neither side makes a Python object per id. The layout: the number of lists, each
list's length, then every id, all little-endian 32-bit integers. It is a message between two
processes of one run, not a file format.
"""

from typing import Final, cast

from librt.strings import BytesWriter, read_i32_le, write_i32_le
from librt.vecs import vec
from mypy_extensions import i32, i64

from bpe_core.engine.encode.pair_ranks import BIT_VALUES

WIDTH: Final[i64] = 4  # bytes of a count, a length or an id
LARGEST: Final[i64] = (1 << 31) - 1
LARGEST_ID: Final[int] = LARGEST
# a repeat is looked for with a bitmap only when the highest id is below this many per id listed
# (and SPARSE_FLOOR): a hostile list of two ids, one of them 2**31 - 1, gets no 256 MB bitmap
SPARSE_SPAN: Final[i64] = 64
SPARSE_FLOOR: Final[i64] = 1 << 16
UNCHECKED: Final[i64] = -2


def check_ids(ids: list[object], low_below: i64) -> tuple[i64, i64]:
    """(the index of the first entry that is not an int (a bool is not) from 0 to 2^31 - 1 (from -1
    at indexes below `low_below`), or, when every entry is, of the first that repeats an id listed
    before it (-1 aside), or -1 when none does; the highest id, -1 when some entry is out of
    range). The index is UNCHECKED when the ids are in range but too sparse to look for a repeat
    here.

    >>> check_ids([3, -1, 0, -1, 5], 2), check_ids([3, 0, 3], 0), check_ids([0, True], 0)
    ((3, -1), (2, 3), (1, -1))
    """
    count = i64(len(ids))
    highest: i64 = -1
    for index in range(count):
        value = ids[index]
        if not isinstance(value, int) or isinstance(value, bool):
            return index, -1
        # int bounds, not i64: an id beyond 64 bits is compared, not converted
        low: int = -1 if index < low_below else 0
        if value < low or value > LARGEST_ID:
            return index, -1
        highest = max(highest, i64(value))
    if highest >= SPARSE_SPAN * count + SPARSE_FLOOR:
        return UNCHECKED, highest
    seen = vec[i64]([0] * (highest // 64 + 1))
    for index in range(count):
        token = i64(cast(int, ids[index]))
        if token < 0:
            continue
        bit = BIT_VALUES[token & 63]
        if seen[token >> 6] & bit:
            return index, highest
        seen[token >> 6] |= bit
    return -1, highest


def pack_id_lists(lists: list[list[int]]) -> bytes:
    """The lists as bytes (see the module docstring); every id in 0..2^31 - 1.

    >>> unpack_id_lists(pack_id_lists([[1, 70000], [], [5]]), [])
    [[1, 70000], [], [5]]
    """
    out = BytesWriter()
    write_i32_le(out, i32(len(lists)))
    for values in lists:
        write_i32_le(out, i32(len(values)))
    for values in lists:
        for value in values:
            if value < 0 or value > LARGEST:
                raise ValueError(f"id {value} is not in 0..2^31 - 1")
            write_i32_le(out, i32(value))
    return out.getvalue()


def unpack_id_lists(data: bytes, boxes: list[object]) -> list[list[int]]:
    """The lists `pack_id_lists` packed; an id below len(boxes) is written as boxes[id], the same
    object for every occurrence (boxes[i] == i), so that no int is made per id."""
    count = i64(read_i32_le(data, 0))
    boxed = i64(len(boxes))
    position = WIDTH * (count + 1)
    lists: list[list[int]] = []
    for index in range(count):
        length = i64(read_i32_le(data, WIDTH * (index + 1)))
        values: list[object] = []
        for _ in range(length):
            value = i64(read_i32_le(data, position))
            values.append(boxes[value] if value < boxed else value)
            position += WIDTH
        lists.append(cast(list[int], values))
    return lists
