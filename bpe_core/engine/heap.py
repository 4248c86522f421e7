"""The two steps of a min-heap of plain i64 keys in a vec, shared by the encoders' merge loops
(`sift_up`, `sift_down`). A key packs what orders it in its high bits (a rank) and a payload in its
low bits (a position), so one comparison orders entries and no tuple is made. This module does not
know what a key means.
"""

from librt.vecs import vec
from mypy_extensions import i64


def sift_up(keys: vec[i64], child: i64, key: i64) -> None:
    """Put key at index `child` of the min-heap in keys[:child + 1] (its entries below `child` in
    heap order) and move it up to its place."""
    while child > 0:
        parent = (child - 1) >> 1
        if keys[parent] <= key:
            break
        keys[child] = keys[parent]
        child = parent
    keys[child] = key


def sift_down(keys: vec[i64], held: i64, key: i64) -> None:
    """Put key at the top of the min-heap in keys[:held] (the old top taken off) and move it down
    to its place; nothing when the heap is empty."""
    if held <= 0:
        return
    parent: i64 = 0
    while True:
        child = 2 * parent + 1
        if child >= held:
            break
        if child + 1 < held and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[parent] = keys[child]
        parent = child
    keys[parent] = key
