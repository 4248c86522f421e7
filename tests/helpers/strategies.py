"""Hypothesis strategies that more than one test module draws from: chunks of symbol ids shaped so
that pairs repeat (random ones, runs of one symbol, periodic ones), weights small and past 32
bits, the reference's tie rules, and corpora closed under a random involution (for mirrored
training).

Nothing here calls bpe_core: these only make inputs.
"""

from hypothesis import strategies as st

from helpers.reference import TIE_RULE_NAMES

WEIGHTS = st.one_of(st.integers(1, 6), st.integers(1, 2**40))
# the tie rules the naive reference implements, by name (bpe_core.engine.TIE_RULES.index gives the engine's)
TIE_RULES = st.sampled_from(TIE_RULE_NAMES)


def chunk_shapes(
    symbol: st.SearchStrategy[int], max_length: int = 24, max_run: int = 40, max_unit: int = 4, max_repeats: int = 16
) -> st.SearchStrategy[list[int]]:
    """Random chunks of up to `max_length` symbols, runs of one symbol (aaaa...) of up to `max_run`,
    and periodic ones (abab..., aabaab...): a unit of up to `max_unit` symbols up to `max_repeats`
    times."""
    random_chunk = st.lists(symbol, max_size=max_length)
    run = st.builds(lambda s, n: [s] * n, symbol, st.integers(0, max_run))
    periodic = st.builds(
        lambda unit, n: unit * n, st.lists(symbol, min_size=1, max_size=max_unit), st.integers(1, max_repeats)
    )
    return st.one_of(random_chunk, run, periodic)


@st.composite
def mirrored_corpora(draw: st.DrawFn, /, **shape: int) -> tuple[int, list[int], list[list[int]], list[int]]:
    """(alphabet_size, mirror, chunks, weights): an alphabet of 1-6 symbols, a random involution on
    it (pairs and fixed points), and chunks (`chunk_shapes` with `shape`) closed under reversal and
    the mirror: each drawn chunk with its mirror image, at the same weight."""
    alphabet_size = draw(st.integers(1, 6))
    order = draw(st.permutations(list(range(alphabet_size))))
    mirror = list(range(alphabet_size))
    for index in range(draw(st.integers(0, alphabet_size // 2))):
        left, right = order[2 * index], order[2 * index + 1]
        mirror[left], mirror[right] = right, left
    chunk = chunk_shapes(st.integers(0, alphabet_size - 1), **shape)
    drawn = draw(st.lists(st.tuples(chunk, st.integers(1, 5)), min_size=1, max_size=6))
    chunks, weights = [], []
    for symbols, weight in drawn:
        chunks += [symbols, [mirror[symbol] for symbol in reversed(symbols)]]
        weights += [weight, weight]
    return alphabet_size, mirror, chunks, weights
