"""The benchmark report's plots: PNGs drawn with matplotlib into docs/img/, linked from
docs/benchmarks.md. Each function draws one figure from numbers a script measured and returns
the Markdown that shows it. It measures nothing and knows no tool.
"""

import math
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)
from _common import BENCHMARKS_DOC  # noqa: E402

IMAGE_DIR = BENCHMARKS_DOC.parent / "img"
# bpe-core first and always in the same colour, the peers after it
COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#ff7f0e", "#7f7f7f")


def _save(figure: "plt.Figure", name: str, title: str) -> str:
    IMAGE_DIR.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    # no timestamp in the file, so a rerun that measures the same draws the same bytes
    figure.savefig(IMAGE_DIR / name, dpi=110, metadata={"Software": None})
    plt.close(figure)
    return f"![{title}](img/{name})"


def grouped_bars(
    name: str, title: str, groups: Sequence[str], series: Mapping[str, Sequence[float]], ylabel: str
) -> str:
    """One bar per series in each group (a tool's throughput per corpus and vocabulary); past 7
    groups the figure widens, so two-line group labels stay apart."""
    figure, axes = plt.subplots(figsize=(max(9, 1.3 * len(groups)), 4.5))
    width = 0.8 / max(1, len(series))
    for index, (label, values) in enumerate(series.items()):
        positions = [group + (index - (len(series) - 1) / 2) * width for group in range(len(groups))]
        shown = [0.0 if math.isnan(value) else value for value in values]
        axes.bar(positions, shown, width, label=label, color=COLOURS[index % len(COLOURS)])
    axes.set_xticks(range(len(groups)), groups)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend(fontsize="small")
    axes.grid(axis="y", alpha=0.3)
    return _save(figure, name, title)


def lines_against_size(
    name: str, title: str, sizes: Sequence[float], panels: Mapping[str, Mapping[str, Sequence[float]]]
) -> str:
    """Side-by-side panels, each a line per series against corpus size (log-log)."""
    figure, all_axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2))
    for axes, (ylabel, series) in zip(all_axes if len(panels) > 1 else [all_axes], panels.items()):
        for index, (label, values) in enumerate(series.items()):
            axes.plot(sizes, values, marker="o", label=label, color=COLOURS[index % len(COLOURS)])
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("corpus MB")
        axes.set_ylabel(ylabel)
        axes.grid(alpha=0.3, which="both")
    all_axes[0].legend(fontsize="small") if len(panels) > 1 else all_axes.legend(fontsize="small")
    figure.suptitle(title)
    return _save(figure, name, title)


def lines_of_points(
    name: str,
    title: str,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    invert_x: bool = False,
) -> str:
    """A line per series through its own measured (x, y) points (throughput against the share of new
    chunks), the y axis from 0 so a flat line looks flat."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for index, (label, (xs, ys)) in enumerate(series.items()):
        axes.plot(xs, ys, marker="o", label=label, color=COLOURS[index % len(COLOURS)])
    if invert_x:
        axes.invert_xaxis()
    axes.set_ylim(bottom=0)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3)
    return _save(figure, name, title)
