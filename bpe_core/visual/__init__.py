"""Pages that show a tokenizer: `bpe inspect --html`, `Tokenizer.visualize` and the notebook view.

`cuts` turns a sample into tokens (capped) with each token's tooltip, `charts` draws the inline
SVG charts, `page` puts one self-contained HTML page together. Nothing here trains, reads
tokenizer files or knows a domain: a pretokenizer with the `DrawsTokens` ability adds its own
view (DNA's GC content, MIDI's piano roll).
"""
