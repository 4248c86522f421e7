"""One self-contained HTML page about a tokenizer: a sample cut into tokens, and charts.

`page` is what `bpe inspect --html` writes and `Tokenizer.visualize` returns: CSS, script and
SVG inline, nothing fetched, so it opens from disk anywhere. `notebook` is the small view of
`Tokenizer._repr_html_`. Token elements are `<span class="t">` in a `.cut` block (one per
tokenizer, `data-side` main or compare), each with `data-id`, `data-k` (its place in the sample)
and a `title` tooltip; a domain's figure marks token `k`'s part with the same `data-k`. This
module reads files only through the tokenizer's reader (for `on`) and writes none.
"""

import os
from collections import Counter
from collections.abc import Sequence
from importlib.resources import as_file
from typing import Any

from bpe_core.contract import document_source, symbol_unit
from bpe_core.corpus.streaming import corpus_reader
from bpe_core.errors import BpeError
from bpe_core.visual import charts
from bpe_core.visual.charts import escape
from bpe_core.visual.cuts import (
    Cut,
    Measured,
    Ranks,
    Shown,
    cut,
    first_document,
    measure,
    measured,
    sample_rows,
    shipped_sample,
    token_html,
)

NOTEBOOK_TOKENS = 200  # what a notebook shows of the shipped sample
LISTED = 15  # tokens per list (rarest, never used)
ZIPF_POINTS = 400  # points of the merge count curve at most (log-spaced ranks)

PAGE_STYLE = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;background:#fff;max-width:1200px}"
STYLE = """
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}
.facts{color:#555}.capped{color:#a33;font-weight:600}
.cut{font:13px/1.9 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;border:1px solid #ddd;
padding:8px;max-height:420px;overflow:auto}
.t{border-radius:3px;padding:1px 0}.t.a{background:#dbe8fb}.t.b{background:#fde3c4}
.t.s{background:#c9f0cf;outline:1px solid #4f9a5b}.t.m-n{background:#f7c1c1}.t.hi,.t.same{outline:2px solid #c00}
.x{font-size:10px;background:#555;color:#fff;border-radius:2px;padding:0 2px;margin:0 1px}
.chip .t{display:inline-block;margin:1px;padding:0 3px;font-size:11px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.figure{overflow:auto;border:1px solid #ddd;margin-top:8px}.figure .hi{stroke:#c00;stroke-width:2.5}
.charts{display:flex;flex-wrap:wrap;gap:18px}.charts figure{margin:0}
figcaption{font-size:12px;color:#555;max-width:560px}table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
.tip{display:none;position:absolute;z-index:9;white-space:pre;font:12px/1.4 ui-monospace,monospace;background:#222;
color:#fff;padding:6px 8px;border-radius:4px;max-width:560px;overflow:hidden;pointer-events:none}
"""
# hovering a token outlines the tokens with its id and its part of the figure, and shows its
# tooltip at once (the title moves to data-tip, so the browser's own tooltip does not follow)
SCRIPT = """
var tip=document.createElement('div');tip.className='tip';document.body.appendChild(tip);
document.querySelectorAll('.side').forEach(function(side){
  side.addEventListener('mouseover',function(event){
    var token=event.target.closest('.t');
    side.querySelectorAll('.hi,.same').forEach(function(e){e.classList.remove('hi','same')});
    if(!token){tip.style.display='none';return;}
    side.querySelectorAll('.t[data-id="'+token.dataset.id+'"]').forEach(function(e){e.classList.add('same')});
    side.querySelectorAll('[data-k="'+token.dataset.k+'"]').forEach(function(e){e.classList.add('hi')});
    if(token.title){token.dataset.tip=token.title;token.removeAttribute('title');}
    var box=token.getBoundingClientRect();
    tip.textContent=token.dataset.tip;tip.style.display='block';
    tip.style.left=(box.left+window.scrollX)+'px';tip.style.top=(box.bottom+window.scrollY+6)+'px';
  });
  side.addEventListener('mouseleave',function(){tip.style.display='none';});
});
"""


def _cut_html(tokenizer: Shown, ranks: Ranks, shown: Cut, side: str) -> str:
    specials = set(tokenizer.special_ids.values())
    drawing = shown.drawing
    chip = "" if tokenizer.pretokenizer.byte_level else " chip"
    parts = [f'<div class="cut{chip}" data-side="{side}">']
    for index, token in enumerate(shown.ids):
        span = shown.spans[index] if shown.spans is not None else None
        notes = drawing.notes[index] if drawing is not None else ""
        mark = drawing.marks[index] if drawing is not None and drawing.marks[index] else ""
        kind = "s" if token in specials else "ab"[index % 2]
        classes = f"t {kind}" + (f" m-{escape(mark)}" if mark else "")
        parts.append(
            f'<span class="{classes}" data-id="{token}" data-k="{index}" '
            f'title="{escape(ranks.tooltip(token, span, notes))}">{token_html(tokenizer, token)}</span>'
        )
    parts.append("</div>")
    if drawing is not None and drawing.figure:
        parts.append(f'<div class="figure">{drawing.figure}</div><p class="facts">{escape(drawing.legend)}</p>')
    return "".join(parts)


def _side(tokenizer: Shown, ranks: Ranks, shown: Cut, side: str) -> str:
    unit = symbol_unit(tokenizer.pretokenizer)
    symbols = sum(ranks.length(token) for token in shown.ids if token not in tokenizer.special_ids.values())
    ratio = f"{symbols / len(shown.ids):.2f}" if shown.ids else "-"
    return (
        f'<div class="side" data-side="{side}"><h3>{escape(tokenizer.name)} (vocab {tokenizer.vocab_size:,}): '
        f'<span class="count">{len(shown.ids):,}</span> tokens for {symbols:,} {escape(unit)} ({ratio} per token)'
        "</h3>"
        + (f'<p class="capped">{escape(shown.capped)}</p>' if shown.capped else "")
        + _cut_html(tokenizer, ranks, shown, side)
        + "</div>"
    )


def _summary(tokenizer: Shown) -> str:
    specials = ", ".join(f"{name}={token_id}" for name, token_id in tokenizer.special_ids.items()) or "none"
    return (
        f'<h1>{escape(tokenizer.name)}</h1><p class="facts">vocab size {tokenizer.vocab_size:,}; '
        f"{tokenizer.alphabet_size:,} base symbols ({escape(symbol_unit(tokenizer.pretokenizer))}); "
        f"{len(tokenizer.merged_ids()):,} merges; pretokenizer {escape(tokenizer.pretokenizer.name)}; "
        f"special tokens: {escape(specials)}</p>"
    )


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def _zipf_points(counts: Sequence[int]) -> list[tuple[float, float]]:
    if not counts:
        return []
    ranks = sorted({round(len(counts) ** (step / ZIPF_POINTS)) - 1 for step in range(ZIPF_POINTS + 1)})
    return [(rank + 1.0, float(counts[rank])) for rank in ranks if 0 <= rank < len(counts)]


def _token_list(tokenizer: Shown, ranks: Ranks, tokens: Sequence[int], usage: Counter[int]) -> str:
    rows = ["<table><tr><th>id</th><th>token</th><th>training count</th><th>uses on the sample</th></tr>"]
    for token in tokens:
        count = ranks.count(token)
        rows.append(
            f'<tr><td>{token}</td><td title="{escape(ranks.tooltip(token))}">{escape(tokenizer.token_text(token))}'
            f"</td><td>{'?' if count is None else f'{count:,}'}</td><td>{usage[token]:,}</td></tr>"
        )
    return "".join(rows) + "</table>"


def _charts(
    tokenizer: Shown, ranks: Ranks, files: Sequence[Measured], compared: Sequence[Measured] | None, compare_name: str
) -> str:
    unit = symbol_unit(tokenizer.pretokenizer)
    lengths = Counter(ranks.length(token) for token in tokenizer.regular_ids())
    parts = ['<section id="charts"><h2>The vocabulary</h2><div class="charts">']
    parts.append(
        _figure(
            charts.histogram(lengths, "token lengths", f"length in base symbols ({unit})", "tokens"),
            f"Token lengths in base symbols, over the {sum(lengths.values()):,} regular ids.",
        )
    )
    parts.append(
        _figure(
            charts.loglog(_zipf_points(tokenizer.merge_counts), "merge count by rank", "rank", "merge count"),
            "Merge count against rank, log-log (the Zipf curve): how often each merge's pair occurred when it "
            "was learned.",
        )
    )
    series = [tokenizer.name] + ([f"{compare_name} (compared)"] if compared is not None else [])
    rows = [
        (
            item.label.rsplit("/", 1)[-1],
            [item.symbols_per_token] + ([compared[index].symbols_per_token] if compared else []),
        )
        for index, item in enumerate(files)
    ]
    parts.append(
        _figure(
            charts.bars(rows, series, "compression", f"{unit} per token"),
            f"Compression on each file: {unit} per token (more is shorter sequences).",
        )
    )
    parts.append("</div>")
    specials = sorted(tokenizer.special_ids.items(), key=lambda item: item[1])
    merged = tokenizer.merged_ids()
    base = sorted(set(tokenizer.regular_ids()) - set(merged))
    regions = [("base", base[0], base[-1] + 1)] if base else []
    if merged:
        regions.append(("merged", min(merged), max(merged) + 1))
    reserved = tokenizer.reserved_ids
    if len(reserved):
        regions.append(("reserved", reserved.start, reserved.stop))
    parts.append('<h2 id="specials">Special tokens</h2>')
    parts.append(
        _figure(
            charts.id_map(regions, specials, "the id space"),
            "The id space: base symbols, merged tokens, special tokens (red), reserved ids.",
        )
    )
    if specials:
        parts.append(
            "<table><tr><th>special token</th><th>id</th></tr>"
            + "".join(f"<tr><td>{escape(name)}</td><td>{token_id}</td></tr>" for name, token_id in specials)
            + "</table>"
        )
    else:
        parts.append("<p>No special tokens.</p>")
    usage: Counter[int] = Counter()
    for item in files:
        usage.update(item.usage)
    never = [token for token in merged if not usage[token]]
    parts.append('<h2 id="rare">Rare and unused tokens (under-trained candidates)</h2>')
    parts.append(
        f'<p><span class="never">{len(never):,}</span> of {len(merged):,} merged tokens are never used on the sample '
        f"({sum(usage.values()):,} tokens).</p>"
    )
    parts.append(
        _figure(
            charts.bars(
                sample_rows([usage[token] for token in merged]),
                ["merged tokens"],
                "uses on the sample",
                "merged tokens",
                digits=0,
            ),
            "How many merged tokens the sample uses how often.",
        )
    )
    if tokenizer.merge_counts:
        rarest = sorted(merged, key=lambda token: (ranks.count(token) or 0, token))
        parts.append(f"<h3>Rarest in training ({LISTED})</h3>" + _token_list(tokenizer, ranks, rarest[:LISTED], usage))
    if never:
        parts.append(f"<h3>Never used on the sample (the first {min(LISTED, len(never))} by rank)</h3>")
        parts.append(_token_list(tokenizer, ranks, never[:LISTED], usage))
    return "".join(parts) + "</section>"


def page(
    tokenizer: Shown,
    document: Any,
    *,
    source: str | None = None,
    on: Sequence[str] = (),
    compare: Shown | None = None,
    workers: int | None = 1,
) -> str:
    """The whole page for `document` (the sample) cut by `tokenizer`, and by `compare` beside it;
    compression and usage are measured on the files `on`, or on the sample when there are none."""
    if compare is not None:
        compared_reader = corpus_reader(compare).name
        reader = corpus_reader(tokenizer).name
        if compared_reader != reader:
            raise BpeError(
                f"the compared tokenizer {compare.name!r} reads {compared_reader!r} documents and "
                f"{tokenizer.name!r} reads {reader!r} ones: compare tokenizers of one kind of document"
            )
    ranks = Ranks(tokenizer)
    shown = cut(tokenizer, document)
    where = source or (os.fspath(document) if isinstance(document, os.PathLike) else document_source(document))
    sides = [_side(tokenizer, ranks, shown, "main")]
    files = [measure(tokenizer, ranks, path, workers) for path in on] or [
        measured("the sample", ranks, Counter(shown.ids))
    ]
    compared: list[Measured] | None = None
    if compare is not None:
        compare_ranks = Ranks(compare)
        try:
            compared_cut = cut(compare, document)
        except BpeError as error:
            raise BpeError(f"the compared tokenizer {compare.name!r} cannot cut the sample: {error}") from None
        sides.append(_side(compare, compare_ranks, compared_cut, "compare"))
        compared = [measure(compare, compare_ranks, path, workers) for path in on] or [
            measured("the sample", compare_ranks, Counter(compared_cut.ids))
        ]
    layout = "pair" if len(sides) > 1 else "single"
    body = (
        _summary(tokenizer)
        + f'<section id="sample"><h2>The sample cut into tokens</h2><p class="facts">sample: {escape(where)}. '
        "Hover a token for its id, symbols, training count and rank.</p>"
        + f'<div class="{layout}">{"".join(sides)}</div></section>'
        + _charts(tokenizer, ranks, files, compared, compare.name if compare is not None else "")
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(tokenizer.name)}: tokens</title>'
        f"<style>{PAGE_STYLE}{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n"
    )


def _scoped(style: str, scope: str) -> str:
    """The style's rules applied inside `scope` only (a notebook's own headings keep theirs)."""
    rules = []
    for rule in style.replace("\n", "").split("}"):
        selectors, brace, body = rule.partition("{")
        if brace:
            scoped = ",".join(f"{scope} {selector.strip()}" for selector in selectors.split(","))
            rules.append(f"{scoped}{{{body}}}")
    return "".join(rules)


def notebook(tokenizer: Shown) -> str:
    """A small view for notebooks: the summary and the first tokens of the shipped sample."""
    ranks = Ranks(tokenizer)
    sample = shipped_sample(tokenizer)
    style = f"<style>{_scoped(STYLE, '.bpe-view')}</style>"
    if sample is None:
        return f'<div class="bpe-view">{style}{_summary(tokenizer)}</div>'
    with as_file(sample) as path:
        from_reader = corpus_reader(tokenizer).documents([str(path)], strict=True)
        shown = cut(tokenizer, next(from_reader), limit=NOTEBOOK_TOKENS, chars=NOTEBOOK_TOKENS * 8)
    return f'<div class="bpe-view">{style}{_summary(tokenizer)}{_side(tokenizer, ranks, shown, "main")}</div>'


def inspect_page(
    tokenizer: Shown, on: Sequence[str] = (), compare: Shown | None = None, workers: int | None = 1
) -> str:
    """`bpe inspect --html`: the page for the first document of the first file `on`, or of the
    sample the package ships for the tokenizer's reader, measured on the files `on`."""
    if on:
        return page(tokenizer, first_document(tokenizer, on[0]), source=on[0], on=on, compare=compare, workers=workers)
    sample = shipped_sample(tokenizer)
    if sample is None:
        reader = corpus_reader(tokenizer).name
        raise BpeError(f"no sample ships for the {reader!r} reader; give --on FILE to show one of yours")
    with as_file(sample) as path:  # the document is read while the page is made
        source = f"{sample.name} (the sample shipped for the {corpus_reader(tokenizer).name} reader)"
        return page(tokenizer, first_document(tokenizer, str(path)), source=source, compare=compare, workers=workers)
