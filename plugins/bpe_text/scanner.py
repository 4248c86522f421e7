"""Compiled scanners that split text exactly as the built-in patterns (gpt2, cl100k, o200k) do
under the `regex` package, with no Python object per chunk or character.

Each scanner walks code points with a class table (letter, number, whitespace and o200k's two
letter groups, built from `regex` itself by `bpe_text.classes`) and decides at each position
which alternative of the pattern matches, reproducing ordered alternation, greedy and possessive
quantifiers, backtracking into a whitespace run and `$`. Tests compare them with `regex` on the
shared corpus and on generated text. This is a mypyc kernel: no pluggy, no `regex`, no I/O.
"""

from typing import Final

from mypy_extensions import i64

LETTER: Final = 1
NUMBER: Final = 2
SPACE: Final = 4
UPPERISH: Final = 8  # o200k: Lu Lt Lm Lo M
LOWERISH: Final = 16  # o200k: Ll Lm Lo M
WORDLIKE: Final = LETTER | NUMBER | SPACE
WORDISH: Final = UPPERISH | LOWERISH  # o200k: what its word alternatives are made of

GPT2: Final = 0
CL100K: Final = 1
O200K: Final = 2

APOSTROPHE: Final = 39
SPACE_CHAR: Final = 32
CR: Final = 13
LF: Final = 10
SLASH: Final = 47


class Scanner:
    """Splits text into the chunks one built-in pattern gives."""

    kind: i64
    table: bytes
    fold: dict[int, int]

    def __init__(self, kind: int, table: bytes, fold: dict[int, int]) -> None:
        """`table[code point]` holds the class bits; `fold` maps each code point that matches an
        ASCII letter case-insensitively under `regex` (such as U+017F for s) to that letter."""
        self.kind = kind
        self.table = table
        self.fold = fold

    def split(self, text: str) -> list[str]:
        chunks: list[str] = []
        size: i64 = len(text)
        start: i64 = 0
        while start < size:
            end = self.chunk_end(text, start, size)
            chunks.append(text[start:end])
            start = end
        return chunks

    def count(self, text: str, counts: dict[str, int]) -> None:
        """Add the text's chunks to `counts`."""
        size: i64 = len(text)
        start: i64 = 0
        while start < size:
            end = self.chunk_end(text, start, size)
            chunk = text[start:end]
            counts[chunk] = counts.get(chunk, 0) + 1
            start = end

    def chunk_end(self, text: str, start: i64, size: i64) -> i64:
        if self.kind == GPT2:
            return self._gpt2(text, start, size)
        if self.kind == CL100K:
            return self._cl100k(text, start, size)
        return self._o200k(text, start, size)

    def _run(self, text: str, index: i64, size: i64, mask: i64) -> i64:
        table = self.table  # a local: no reference count traffic per character
        while index < size and (table[ord(text[index])] & mask) != 0:
            index += 1
        return index

    def _run_other(self, text: str, index: i64, size: i64) -> i64:
        """[^\\s\\p{L}\\p{N}]+ from index."""
        table = self.table
        while index < size and (table[ord(text[index])] & WORDLIKE) == 0:
            index += 1
        return index

    def _lower(self, text: str, index: i64, size: i64) -> i64:
        """The ASCII letter text[index] matches case-insensitively, or 0."""
        if index >= size:
            return 0
        return self.fold.get(ord(text[index]), 0)

    def _contraction(self, text: str, index: i64, size: i64, fold_case: bool) -> i64:
        """End of 's 't 're 've 'm 'll 'd at index (any order of alternatives gives the same
        match, their second letters differ), or index if there is none."""
        if index + 1 >= size or ord(text[index]) != APOSTROPHE:
            return index
        if fold_case:
            first = self._lower(text, index + 1, size)
            second = self._lower(text, index + 2, size)
        else:
            first = ord(text[index + 1])
            second = ord(text[index + 2]) if index + 2 < size else 0
        if first == 115 or first == 116 or first == 109 or first == 100:  # s t m d
            return index + 2
        if (first == 114 and second == 101) or (first == 118 and second == 101) or (first == 108 and second == 108):
            return index + 3  # re ve ll
        return index

    def _whitespace_lookahead(self, start: i64, end: i64, size: i64) -> i64:
        """\\s+(?!\\S) then \\s+ on the run start..end: all of it at the end of the text, else all
        but the last character when that leaves one, else the single character."""
        if end == size or end - start < 2:
            return end
        return end - 1

    def _space_run(self, text: str, start: i64, size: i64) -> tuple[i64, i64]:
        """\\s+ from start: its end, and the index after its last \\r or \\n (-1 if none),
        found on the way (scanning the run back for it cost as much as the run itself)."""
        table = self.table
        index = start
        newline_end: i64 = -1
        while index < size:
            code = ord(text[index])
            if (table[code] & SPACE) == 0:
                break
            index += 1
            if code == CR or code == LF:
                newline_end = index
        return index, newline_end

    def _gpt2(self, text: str, start: i64, size: i64) -> i64:
        table = self.table  # a local: no reference count traffic per read
        code = ord(text[start])
        if code == APOSTROPHE:  # a contraction starts with one (_contraction's own first test)
            end = self._contraction(text, start, size, False)
            if end > start:
                return end
        flags: i64 = table[code]
        if code == SPACE_CHAR and start + 1 < size:
            following = table[ord(text[start + 1])]
            if following & LETTER:
                return self._run(text, start + 1, size, LETTER)
            if following & NUMBER:
                return self._run(text, start + 1, size, NUMBER)
            if (following & WORDLIKE) == 0:
                return self._run_other(text, start + 1, size)
        if flags & LETTER:
            return self._run(text, start, size, LETTER)
        if flags & NUMBER:
            return self._run(text, start, size, NUMBER)
        if (flags & WORDLIKE) == 0:
            return self._run_other(text, start, size)
        return self._whitespace_lookahead(start, self._run(text, start, size, SPACE), size)

    def _cl100k(self, text: str, start: i64, size: i64) -> i64:
        table = self.table  # a local: no reference count traffic per read
        code = ord(text[start])
        if code == APOSTROPHE:  # a contraction starts with one (_contraction's own first test)
            end = self._contraction(text, start, size, True)
            if end > start:
                return end
        flags: i64 = table[code]
        # [^\r\n\p{L}\p{N}]?+\p{L}++
        if flags & LETTER:
            return self._run(text, start, size, LETTER)
        if code != CR and code != LF and (flags & (LETTER | NUMBER)) == 0 and start + 1 < size:
            if table[ord(text[start + 1])] & LETTER:
                return self._run(text, start + 1, size, LETTER)
        # \p{N}{1,3}+
        if flags & NUMBER:
            end = start + 1
            while end < size and end < start + 3 and (table[ord(text[end])] & NUMBER) != 0:
                end += 1
            return end
        # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
        if code == SPACE_CHAR and start + 1 < size and (table[ord(text[start + 1])] & WORDLIKE) == 0:
            return self._newlines(text, self._run_other(text, start + 1, size), size, False)
        if (flags & WORDLIKE) == 0:
            return self._newlines(text, self._run_other(text, start, size), size, False)
        run_end, newline_end = self._space_run(text, start, size)
        if run_end == size:  # \s++$
            return run_end
        if newline_end > 0:  # \s*[\r\n]
            return newline_end
        return self._whitespace_lookahead(start, run_end, size)

    def _newlines(self, text: str, index: i64, size: i64, slash: bool) -> i64:
        """[\\r\\n]* (with slash: [\\r\\n/]*) from index."""
        while index < size:
            code = ord(text[index])
            if code == CR or code == LF or (slash and code == SLASH):
                index += 1
            else:
                break
        return index

    def _o200k(self, text: str, start: i64, size: i64) -> i64:
        table = self.table  # a local: no reference count traffic per read
        end = self._o200k_word(text, start, size)
        if end > start:
            return end
        code = ord(text[start])
        flags: i64 = table[ord(text[start])]
        if flags & NUMBER:  # \p{N}{1,3}
            end = start + 1
            while end < size and end < start + 3 and (table[ord(text[end])] & NUMBER) != 0:
                end += 1
            return end
        # ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
        if code == SPACE_CHAR and start + 1 < size and (table[ord(text[start + 1])] & WORDLIKE) == 0:
            return self._newlines(text, self._run_other(text, start + 1, size), size, True)
        if (flags & WORDLIKE) == 0:
            return self._newlines(text, self._run_other(text, start, size), size, True)
        run_end, newline_end = self._space_run(text, start, size)
        if newline_end > 0:  # \s*[\r\n]+
            return newline_end
        return self._whitespace_lookahead(start, run_end, size)

    def _o200k_word(self, text: str, start: i64, size: i64) -> i64:
        """The two word alternatives of o200k, each tried with and then without the optional
        [^\\r\\n\\p{L}\\p{N}] prefix; start if neither matches."""
        table = self.table
        code = ord(text[start])
        prefixed = code != CR and code != LF and (table[code] & (LETTER | NUMBER)) == 0
        # both alternatives need an Upperish or Lowerish character after the optional prefix:
        # without one, neither is tried (spaces, punctuation and numbers fail here at once)
        if (table[code] & WORDISH) == 0 and not (
            prefixed and start + 1 < size and (table[ord(text[start + 1])] & WORDISH) != 0
        ):
            return start
        if prefixed and start + 1 < size:
            end = self._o200k_lower_word(text, start + 1, size)
            if end > 0:
                return end
        end = self._o200k_lower_word(text, start, size)
        if end > 0:
            return end
        if prefixed and start + 1 < size:
            end = self._o200k_upper_word(text, start + 1, size)
            if end > 0:
                return end
        end = self._o200k_upper_word(text, start, size)
        if end > 0:
            return end
        return start

    def _o200k_lower_word(self, text: str, start: i64, size: i64) -> i64:
        """[Upperish]*[Lowerish]+ then an optional contraction; -1 if no match at start."""
        table = self.table
        upper_end = start  # most words start lower-case: no call for an empty run
        if start < size and (table[ord(text[start])] & UPPERISH) != 0:
            upper_end = self._run(text, start + 1, size, UPPERISH)
        # greedy [Upperish]* gives back characters until [Lowerish] can start
        lower_start = upper_end
        while lower_start >= start:
            if lower_start < size and (table[ord(text[lower_start])] & LOWERISH) != 0:
                end = self._run(text, lower_start, size, LOWERISH)
                return self._contraction(text, end, size, True) if end < size and ord(text[end]) == APOSTROPHE else end
            lower_start -= 1
        return -1

    def _o200k_upper_word(self, text: str, start: i64, size: i64) -> i64:
        """[Upperish]+[Lowerish]* then an optional contraction; -1 if no match at start."""
        upper_end = self._run(text, start, size, UPPERISH)
        if upper_end == start:
            return -1
        end = self._run(text, upper_end, size, LOWERISH)
        return self._contraction(text, end, size, True) if end < size and ord(text[end]) == APOSTROPHE else end
