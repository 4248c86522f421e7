"""The published pre-tokenization patterns, copied from where their authors published them: for the
tests that check bpe_text's built-in patterns and split text the way the peers do (regex.findall,
rustbpe, tiktoken, `tokenizers`' Split).

Deliberately not imported from bpe_text.pretokenizers, which has its own copies: these are what
the plugin's are checked against.
"""

# GPT-2's split pattern as openai/gpt-2's src/encoder.py spelled it at release (a later commit
# there adds an <|endoftext|> alternative; tiktoken's r50k_pat_str is an equivalent respelling).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# cl100k_base and o200k_base as tiktoken_ext/openai_public.py publishes them
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501 (as published)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# by the name of the built-in pretokenizer that must use each
PUBLISHED_PATTERNS = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}
