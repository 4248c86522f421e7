"""The self-contained HTML page of `bpe eval --html`: the numbers `--json` writes, as tables and
inline SVG charts, the tokenizers side by side.

It draws from the plain data `bpe_core.evaluation.evaluate` returns (the same numbers as the
JSON, so the page and the file never disagree); it measures nothing, reads no files and writes
none. CSS and SVG are inline and there is no script: the page opens from disk anywhere.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from bpe_core.visual import charts
from bpe_core.visual.charts import escape
from bpe_core.visual.page import PAGE_STYLE, STYLE

EVALUATION_STYLE = (
    ".side h3{font-size:15px;margin:8px 0}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".swatch{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}"
)


def _number(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _figure(svg: str, caption: str, metric: str) -> str:
    return f'<figure data-metric="{escape(metric)}">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def _summary_table(results: Mapping[str, Any]) -> str:
    """A row per tokenizer, all groups together; a column only where some tokenizer has a value."""
    columns: list[tuple[str, str, int]] = [
        ("symbols per token", "symbols_per_token", 2),
        ("tokens per word", "tokens_per_word", 3),
        ("tokens per beat", "tokens_per_beat", 2),
        (f"Rényi efficiency (α = {results['alpha']:g})", "renyi_efficiency", 4),
        ("unused ids", "unused", 0),
        (f"rare ids (< {results['rare_below']} uses)", "rare", 0),
        ("residue", "residue", 0),
    ]
    totals = [tokenizer["total"] for tokenizer in results["tokenizers"]]
    shown = [column for column in columns if any(total.get(column[1]) is not None for total in totals)]
    titles = ["tokenizer", "vocab", *(title for title, _, _ in shown), "parity Gini"]
    rows = ['<table class="summary"><tr>' + "".join(f"<th>{escape(title)}</th>" for title in titles) + "</tr>"]
    for index, tokenizer in enumerate(results["tokenizers"]):
        total = tokenizer["total"]
        cells = [
            _number(tokenizer["vocab_size"], 0),
            *(_number(total.get(key), digits) for _, key, digits in shown),
            _number(tokenizer["gini"], 4),
        ]
        if total["symbols_per_token"] is not None:
            cells[1] += f" {tokenizer['unit']}"
        rows.append(
            f'<tr data-tokenizer="{escape(tokenizer["name"])}"><td>{_swatch(index)}{escape(tokenizer["name"])}</td>'
            + "".join(f'<td class="n">{escape(cell)}</td>' for cell in cells)
            + "</tr>"
        )
    return "".join(rows) + "</table>"


def _swatch(index: int) -> str:
    """The colour of the tokenizer's bars in the charts."""
    return f'<span class="swatch" style="background:{charts.COLORS[index % len(charts.COLORS)]}"></span>'


def _group_charts(results: Mapping[str, Any]) -> str:
    """A chart per metric: a row per group, a bar per tokenizer."""
    tokenizers = results["tokenizers"]
    series = [tokenizer["name"] for tokenizer in tokenizers]
    names = [group["name"] for group in results["groups"]]
    unit = tokenizers[0]["unit"]
    cost = "tokens" if results["parallel"] else f"tokens per {unit.removesuffix('s')}"
    metrics: list[tuple[str, str, str, int]] = [
        ("symbols_per_token", f"{unit} per token", f"Compression: {unit} per token (more is shorter sequences).", 2),
        (
            "tokens_per_word",
            "tokens per word",
            "Tokens per word (fewer is better); a word: " + results["word"] + ".",
            3,
        ),
        ("tokens_per_beat", "tokens per beat", "Tokens per beat of music (fewer is shorter sequences).", 2),
        (
            "renyi_efficiency",
            f"Rényi efficiency (α = {results['alpha']:g})",
            "Rényi efficiency: H_α of the token distribution over log of the vocabulary size (Zouhar et al. 2023).",
            4,
        ),
        ("cost", f"parity cost: {cost}", f"The parity cost of each group: {results['cost']}; equal is fair.", 4),
    ]
    parts = ['<div class="charts">']
    for key, title, caption, digits in metrics:
        values = [[tokenizer["groups"][index][key] for tokenizer in tokenizers] for index in range(len(names))]
        if any(value is None for row in values for value in row):
            continue
        rows = [(name, [float(value) for value in row]) for name, row in zip(names, values)]
        parts.append(_figure(charts.bars(rows, series, title, title, digits=digits), caption, key))
    return "".join(parts) + "</div>"


def _use_buckets(tokenizer: Mapping[str, Any], rare_below: int) -> list[tuple[str, list[float]]]:
    total = tokenizer["total"]
    used = tokenizer["vocabulary"] - total["unused"]
    rows = [
        ("unused", [float(total["unused"])]),
        (f"rare (1 to {rare_below - 1} uses)", [float(total["rare"])]),
        (f"{rare_below} uses or more", [float(used - total["rare"])]),
    ]
    if "residue" in total:
        rows.append(("of which residue", [float(total["residue"])]))
    return rows


def _vocabulary_sides(results: Mapping[str, Any]) -> str:
    """Per tokenizer, side by side: how much of its vocabulary the files use, and its Gini."""
    parts = ['<div class="pair">' if len(results["tokenizers"]) > 1 else '<div class="single">']
    for tokenizer in results["tokenizers"]:
        gini = tokenizer["gini"]
        said = f"parity Gini {gini:.4f}" if gini is not None else "one group: no parity Gini"
        parts.append(
            f'<div class="side" data-tokenizer="{escape(tokenizer["name"])}"><h3>{escape(tokenizer["name"])} '
            f"(vocab {tokenizer['vocab_size']:,}): {escape(said)}</h3>"
            + _figure(
                charts.bars(
                    _use_buckets(tokenizer, results["rare_below"]),
                    [tokenizer["name"]],
                    "vocabulary use",
                    "ids",
                    digits=0,
                ),
                f"How many of the {tokenizer['vocabulary']:,} regular ids the files make how often.",
                "use",
            )
            + "</div>"
        )
    return "".join(parts) + "</div>"


def _group_tables(results: Mapping[str, Any]) -> str:
    keys: Sequence[tuple[str, str, int]] = (
        ("documents", "documents", 0),
        ("tokens", "tokens", 0),
        ("symbols_per_token", "symbols per token", 2),
        ("tokens_per_word", "tokens per word", 3),
        ("tokens_per_beat", "tokens per beat", 2),
        ("renyi_efficiency", "Rényi efficiency", 4),
        ("unused", "unused", 0),
        ("rare", "rare", 0),
        ("residue", "residue", 0),
        ("cost", "cost", 4),
    )
    parts = []
    for tokenizer in results["tokenizers"]:
        rows = [*tokenizer["groups"], tokenizer["total"]]
        shown = [(key, title, digits) for key, title, digits in keys if any(row.get(key) is not None for row in rows)]
        parts.append(
            f"<h3>{escape(tokenizer['name'])} ({escape(tokenizer['path'])})</h3><table><tr><th>group</th>"
            + "".join(f"<th>{escape(title)}</th>" for _, title, _ in shown)
            + "</tr>"
        )
        for row in rows:
            parts.append(
                f"<tr><td>{escape(str(row['name']))}</td>"
                + "".join(f'<td class="n">{escape(_number(row.get(key), digits))}</td>' for key, _, digits in shown)
                + "</tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def evaluation_page(results: Mapping[str, Any]) -> str:
    """The whole page for `evaluate`'s results."""
    groups = ", ".join(
        f"{group['name']} ({len(group['paths'])} path{'s' if len(group['paths']) > 1 else ''})"
        for group in results["groups"]
    )
    names = ", ".join(tokenizer["name"] for tokenizer in results["tokenizers"])
    body = (
        f"<h1>Tokenizer evaluation: {escape(names)}</h1>"
        f'<p class="facts">groups: {escape(groups)}. The parity cost is {escape(results["cost"])}; '
        "docs/eval.md defines every number.</p>"
        '<section id="summary"><h2>All groups together</h2>'
        + _summary_table(results)
        + '</section><section id="groups"><h2>Per group</h2>'
        + _group_charts(results)
        + '</section><section id="vocabulary"><h2>Vocabulary use</h2>'
        + _vocabulary_sides(results)
        + '</section><section id="numbers"><h2>Every number</h2>'
        + _group_tables(results)
        + "</section>"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(names)}: evaluation</title>'
        f"<style>{PAGE_STYLE}{STYLE}{EVALUATION_STYLE}</style></head><body>{body}</body></html>\n"
    )
