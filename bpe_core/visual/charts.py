"""Small inline SVG charts for the inspect page: bars, a histogram, a log-log curve, an id map.

Each function returns one `<svg>` element as a string, with its numbers escaped and rounded, sized
in pixels so the page needs no script to draw it. Nothing here knows tokenizers: callers hand
in the numbers. `escape` is the one way the page escapes text.
"""

import html
import math
from collections.abc import Sequence

WIDTH = 560
HEIGHT = 220
MARGIN = 44  # room for the axis labels
COLORS = ("#3b6fb6", "#d9822b", "#4f9a5b", "#a04fa0")


def escape(text: str) -> str:
    """Text for HTML content and attribute values (quotes too)."""
    return html.escape(text, quote=True)


def _svg(body: list[str], title: str, width: int = WIDTH, height: int = HEIGHT) -> str:
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _axes(x_label: str, y_label: str, width: int = WIDTH, height: int = HEIGHT) -> list[str]:
    bottom = height - MARGIN
    return [
        f'<line x1="{MARGIN}" y1="{bottom}" x2="{width - 8}" y2="{bottom}" stroke="#444"/>',
        f'<line x1="{MARGIN}" y1="8" x2="{MARGIN}" y2="{bottom}" stroke="#444"/>',
        f'<text x="{(MARGIN + width) // 2}" y="{height - 6}" text-anchor="middle" font-size="12">'
        f"{escape(x_label)}</text>",
        f'<text x="12" y="{bottom // 2}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 12 {bottom // 2})">{escape(y_label)}</text>',
    ]


def _number(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value)}"


def histogram(counts: dict[int, int], title: str, x_label: str, y_label: str) -> str:
    """Bars of `counts` (value -> how many), one per value from the smallest to the largest."""
    if not counts:
        return _svg([f'<text x="20" y="40">{escape("nothing to count")}</text>'], title)
    low = min(counts)
    high = max(counts)
    values = list(range(low, high + 1))
    top = max(counts.values())
    plot_width = WIDTH - MARGIN - 12
    bar = plot_width / len(values)
    bottom = HEIGHT - MARGIN
    body = _axes(x_label, y_label)
    every = max(1, len(values) // 12)
    for index, value in enumerate(values):
        height = (bottom - 12) * counts.get(value, 0) / top
        x = MARGIN + index * bar
        body.append(
            f'<rect x="{x + 1:.1f}" y="{bottom - height:.1f}" width="{max(bar - 2, 1):.1f}" height="{height:.1f}" '
            f'fill="{COLORS[0]}"><title>{value}: {counts.get(value, 0):,}</title></rect>'
        )
        if index % every == 0:
            body.append(
                f'<text x="{x + bar / 2:.1f}" y="{bottom + 14}" text-anchor="middle" font-size="10">{value}</text>'
            )
    body.append(f'<text x="{WIDTH - 12}" y="18" text-anchor="end" font-size="10">max {top:,}</text>')
    return _svg(body, title)


def loglog(points: Sequence[tuple[float, float]], title: str, x_label: str, y_label: str) -> str:
    """A curve through positive (x, y) points on log-log axes (the Zipf plot of merge counts)."""
    shown = [(x, y) for x, y in points if x > 0 and y > 0]
    if not shown:
        return _svg([f'<text x="20" y="40">{escape("no counts recorded (an imported tokenizer)")}</text>'], title)
    low_x = math.log10(min(x for x, _ in shown))
    high_x = math.log10(max(x for x, _ in shown))
    low_y = math.log10(min(y for _, y in shown))
    high_y = math.log10(max(y for _, y in shown))
    span_x = max(high_x - low_x, 1e-9)
    span_y = max(high_y - low_y, 1e-9)
    bottom = HEIGHT - MARGIN

    def place(x: float, y: float) -> str:
        px = MARGIN + (WIDTH - MARGIN - 12) * (math.log10(x) - low_x) / span_x
        py = bottom - (bottom - 12) * (math.log10(y) - low_y) / span_y
        return f"{px:.1f},{py:.1f}"

    body = _axes(x_label, y_label)
    body.append(
        f'<polyline fill="none" stroke="{COLORS[1]}" stroke-width="2" '
        f'points="{" ".join(place(x, y) for x, y in shown)}"/>'
    )
    for exponent in range(math.floor(low_x), math.ceil(high_x) + 1):
        if low_x <= exponent <= high_x:
            x = MARGIN + (WIDTH - MARGIN - 12) * (exponent - low_x) / span_x
            body.append(
                f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle" '
                f'font-size="10">{_number(10**exponent)}</text>'
            )
    for exponent in range(math.floor(low_y), math.ceil(high_y) + 1):
        if low_y <= exponent <= high_y:
            y = bottom - (bottom - 12) * (exponent - low_y) / span_y
            body.append(
                f'<text x="{MARGIN - 4}" y="{y + 3:.1f}" text-anchor="end" '
                f'font-size="10">{_number(10**exponent)}</text>'
            )
    return _svg(body, title)


def bars(
    rows: Sequence[tuple[str, Sequence[float]]], series: Sequence[str], title: str, unit: str, digits: int = 2
) -> str:
    """Horizontal bars: per row (a label), one bar per series (the page's tokenizer, the compared one)."""
    row_height = 16 * max(1, len(series)) + 10
    label_width = 190
    height = 30 + row_height * max(1, len(rows))
    top = max((value for _, values in rows for value in values), default=0.0) or 1.0
    body = []
    for row, (label, values) in enumerate(rows):
        y = 24 + row * row_height
        shown_label = label if len(label) <= 28 else "..." + label[-25:]
        body.append(
            f'<text x="{label_width - 6}" y="{y + 12}" text-anchor="end" font-size="11">{escape(shown_label)}</text>'
        )
        for index, value in enumerate(values):
            length = (WIDTH - label_width - 70) * value / top
            body.append(
                f'<rect x="{label_width}" y="{y + 16 * index}" width="{length:.1f}" height="14" '
                f'fill="{COLORS[index % len(COLORS)]}"><title>{escape(series[index])}: {value:.{digits}f} '
                f"{escape(unit)}</title></rect>"
                f'<text x="{label_width + length + 4:.1f}" y="{y + 16 * index + 11}" '
                f'font-size="11">{value:.{digits}f}</text>'
            )
    legend = "  ".join(f"{name}" for name in series)
    body.append(f'<text x="{label_width}" y="14" font-size="11">{escape(unit)}: {escape(legend)}</text>')
    return _svg(body, title, height=height)


def id_map(regions: Sequence[tuple[str, int, int]], marks: Sequence[tuple[str, int]], title: str) -> str:
    """The id space as a strip: named regions [start, stop) and marked single ids (special tokens)."""
    stop = max((end for _, _, end in regions), default=1) or 1
    scale = (WIDTH - 20) / stop
    body = []
    for index, (name, start, end) in enumerate(regions):
        if end <= start:
            continue
        x = 10 + start * scale
        body.append(
            f'<rect x="{x:.1f}" y="20" width="{max((end - start) * scale, 1):.1f}" height="24" '
            f'fill="{COLORS[index % len(COLORS)]}" opacity="0.75"><title>{escape(name)}: ids '
            f"{start}..{end - 1}</title></rect>"
            f'<text x="{x + 2:.1f}" y="{58 + 11 * (index % 2)}" font-size="10">{escape(name)} {start}</text>'
        )
    for name, token_id in marks:
        x = 10 + token_id * scale
        body.append(
            f'<line x1="{x:.1f}" y1="14" x2="{x:.1f}" y2="50" stroke="#c00" stroke-width="2">'
            f"<title>{escape(name)} = {token_id}</title></line>"
        )
    return _svg(body, title, height=78)
