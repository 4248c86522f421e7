"""DNA's part of `bpe inspect --html`: GC content per token and runs of N along the sample.

`draw` gives each token's GC count (of the letters it covers, as the pretokenizer spells them)
as a tooltip line, marks tokens that hold N (or another ambiguity letter), and draws a track:
one bar per token at its position, as high as its GC fraction, with N runs in red. It reads and
decodes nothing.
"""

from collections.abc import Sequence

from bpe_core.contract import TokenDrawing
from bpe_core.visual.charts import escape

TRACK_WIDTH = 1100  # pixels for the sample's extent
TRACK_HEIGHT = 90


def n_runs(spelled: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, end) of each run of consecutive tokens that are N only, in sample positions."""
    runs: list[tuple[int, int]] = []
    for letters, (start, end) in zip(spelled, spans):
        if not letters or set(letters) != {"N"}:
            continue
        if runs and runs[-1][1] == start:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


def _average_line(
    spans: Sequence[tuple[int, int]], fractions: Sequence[float], first: int, last: int, scale: float
) -> str:
    """GC averaged over windows of about a hundredth of the sample (at least 20 positions), as a line."""
    by_position = [-1.0] * (last - first)
    for (start, end), fraction in zip(spans, fractions):
        by_position[start - first : end - first] = [fraction] * (end - start)
    window = max(20, (last - first) // 100)
    points = []
    for start in range(0, len(by_position), window):
        known = [value for value in by_position[start : start + window] if value >= 0]
        if known:
            middle = start + min(window, len(by_position) - start) / 2
            points.append(f"{middle * scale:.1f},{TRACK_HEIGHT * (1 - sum(known) / len(known)):.1f}")
    title = f"GC over windows of {window} positions"
    return f'<polyline class="avg" points="{" ".join(points)}"><title>{title}</title></polyline>'


def draw(spelled: Sequence[str], spans: Sequence[tuple[int, int]] | None) -> TokenDrawing:
    """Tooltip lines (GC), marks (`n`) and the GC / N track of the shown tokens, given each
    token's letters (`spelled`, upper case; a special token's are empty)."""
    if spans is None:  # positions from the letters, one after another
        spans = []
        position = 0
        for letters in spelled:
            spans.append((position, position + len(letters)))
            position += len(letters)
    notes = []
    marks = []
    fractions = []
    for letters in spelled:
        gc = sum(letter in "GCS" for letter in letters)
        known = sum(letter in "ACGTSW" for letter in letters)  # S and W say G/C or A/T too
        fractions.append(gc / known if known else -1.0)
        notes.append(f"GC {gc}/{len(letters)} ({gc / len(letters):.0%})" if letters else "")
        marks.append("n" if letters and set(letters) - set("ACGT") else "")
    runs = n_runs(spelled, spans)
    first = min((start for start, _ in spans), default=0)
    last = max((end for _, end in spans), default=1)
    scale = TRACK_WIDTH / max(last - first, 1)
    body = [
        "<style>.g0{fill:#3b6fb6}.g1{fill:#d9822b}.nrun{fill:#d22;opacity:.55}"
        ".avg{fill:none;stroke:#111;stroke-width:1.5}</style>",
        f'<line x1="0" y1="{TRACK_HEIGHT / 2}" x2="{TRACK_WIDTH}" y2="{TRACK_HEIGHT / 2}" stroke="#aaa" '
        'stroke-dasharray="4 3"><title>GC 50%</title></line>',
    ]
    for index, ((start, end), fraction) in enumerate(zip(spans, fractions)):
        if fraction < 0:
            continue
        height = max(fraction * TRACK_HEIGHT, 1.0)
        body.append(
            f'<rect class="g{index % 2}" data-k="{index}" x="{(start - first) * scale:.1f}" '
            f'y="{TRACK_HEIGHT - height:.1f}" '
            f'width="{max((end - start) * scale, 0.6):.1f}" height="{height:.1f}"/>'
        )
    body.append(_average_line(spans, fractions, first, last, scale))
    for start, end in runs:
        body.append(
            f'<rect class="nrun" x="{(start - first) * scale:.1f}" y="0" width="{max((end - start) * scale, 2):.1f}" '
            f'height="{TRACK_HEIGHT}"><title>{escape(f"N run at {start + 1}-{end} ({end - start} bp)")}</title></rect>'
        )
    for tick in range(0, 11):
        position = first + (last - first) * tick // 10
        body.append(
            f'<text x="{min((position - first) * scale, TRACK_WIDTH - 40):.1f}" y="{TRACK_HEIGHT + 14}" '
            f'font-size="10">{position + 1:,}</text>'
        )
    svg = (
        f'<svg class="gc" xmlns="http://www.w3.org/2000/svg" width="{TRACK_WIDTH}" height="{TRACK_HEIGHT + 20}" '
        f'viewBox="0 0 {TRACK_WIDTH} {TRACK_HEIGHT + 20}"><title>GC content per token</title>{"".join(body)}</svg>'
    )
    longest = max((end - start for start, end in runs), default=0)
    legend = (
        f"GC content per token along positions {first + 1:,}-{last:,} (bar height; black line: averaged "
        f"over windows of {max(20, (last - first) // 100)} positions; dashed line: 50%). "
        f"N runs in red: {len(runs)}" + (f", the longest {longest:,} bp." if runs else ".")
    )
    return TokenDrawing(notes, marks, svg, legend)
