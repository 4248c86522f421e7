"""Progress bars for long work: shown on a terminal, silent in pipes and when asked to be quiet."""

import sys
from typing import Any

from tqdm import tqdm


def wanted(progress: bool | None) -> bool:
    """None means: show progress when standard error is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


def bar(progress: bool | None, desc: str, total: float | None = None, unit: str = "it", **options: Any) -> "tqdm[Any]":
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not wanted(progress),
        file=sys.stderr,
        dynamic_ncols=True,
        leave=False,
        **options,
    )
