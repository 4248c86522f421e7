"""Lists of token ids as one bytes object and back: how a worker process hands a batch's ids to
the process that asked for them (`runners.local.WorkerPool`). Unpickling the lists, or an
`array`'s `tolist`, makes a new int object per id; here the receiving side writes each id as an
int object shared by all its occurrences, and neither side makes a Python object per id.

The layout: the number of lists, each list's length, then every id, all little-endian 32-bit
integers. It is a message between two processes of one run, not a file format.
"""

from typing import Final, cast

from librt.strings import BytesWriter, read_i32_le, write_i32_le
from mypy_extensions import i32, i64

WIDTH: Final[i64] = 4  # bytes of a count, a length or an id
LARGEST: Final[i64] = (1 << 31) - 1


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
