"""Writes `_bert_unicode_tables.py` by probing the Rust `tokenizers` BERT normalizer.

Run from the repository root (needs `tokenizers`, `tensorflow`, `tensorflow-text`):

    python -m keras_bert.preprocessing._make_bert_unicode_tables

transformers' default `BertTokenizer` (since v5) is the Rust `BertNormalizer` +
`BertPreTokenizer` of Hugging Face `tokenizers`. Their Unicode data is not
Python's `unicodedata` and not TensorFlow's ICU:

- "control" (dropped), "punctuation" and "nonspacing mark" (dropped by
  accent stripping) come from the `unicode_categories` crate, an old Unicode
  version: unassigned code points (Cn) are *not* controls there (they are
  kept and usually become `[UNK]`), and marks or punctuation added to Unicode
  since are neither;
- the CJK ranges have 0x2B920 where BERT's Python code has 0x2B820;
- lowercasing is Rust's `char::to_lowercase` (newer than TensorFlow's ICU
  lowercasing, one character at a time, so a final capital sigma gives "σ");
- NFD is the `unicode-normalization-alignments` crate, older than
  tensorflow-text's ICU: some code points ICU decomposes or reorders (as
  combining marks) are plain starters there.

So instead of deriving the classes from a Unicode database, this script asks
the Rust normalizer about every code point, one at a time, and records what
it does; the tokenizer reproduces exactly that with TensorFlow ops.
"""

import sys

import tensorflow as tf
import tensorflow_text as tf_text

# Surrogates cannot occur in UTF-8 text.
CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
PLACEHOLDER_BASE = 0xE000  # private use: dropped as control before NFD ever runs

# Acute accent (combining class 230) and combining tilde overlay (class 1):
# a code point m has a nonzero class iff NFD swaps it with one of them.
_ACUTE, _OVERLAY = "\u0301", "\u0334"


def _ranges(code_points):
    ranges = []
    for cp in sorted(code_points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [tuple(r) for r in ranges]


def _runs(mapping):
    """{cp: cp'} → runs (first, last, step, delta): cp' = cp + delta for cp in range(first, last + 1, step)."""
    runs = []
    for cp in sorted(mapping):
        delta = mapping[cp] - cp
        if runs:
            first, last, step, run_delta = runs[-1]
            gap = cp - last
            if run_delta == delta and gap in (1, 2) and (first == last or gap == step):
                runs[-1] = (first, cp, gap, delta)
                continue
        runs.append((cp, cp, 1, delta))
    return runs


def _probe_rust():
    # Only the generator needs the Rust tokenizer; the package does not.
    from tokenizers import normalizers, pre_tokenizers

    def bert(clean=False, cjk=False, strip=False, lower=False):
        return normalizers.BertNormalizer(
            clean_text=clean, handle_chinese_chars=cjk, strip_accents=strip, lowercase=lower
        ).normalize_str

    clean, cjk, strip, lower = bert(clean=True), bert(cjk=True), bert(strip=True), bert(lower=True)
    nfd = normalizers.NFD().normalize_str
    pre = pre_tokenizers.BertPreTokenizer().pre_tokenize_str
    found = {name: set() for name in ("control", "whitespace", "cjk", "punctuation", "mark", "combining")}
    found["lower"], found["nfd"] = {}, {}
    for cp in CODE_POINTS:
        char = chr(cp)
        cleaned = clean("a" + char + "a")
        if cleaned == "aa":
            found["control"].add(cp)
        elif cleaned == "a a":
            found["whitespace"].add(cp)
        elif cleaned != "a" + char + "a":
            raise AssertionError(f"clean_text maps U+{cp:04X} to {cleaned!r}")
        if cjk(char) != char:
            assert cjk(char) == f" {char} ", hex(cp)
            found["cjk"].add(cp)
        pieces = len(pre("a" + char + "a"))
        if pieces == 3:
            found["punctuation"].add(cp)
        if strip(char) == "":
            found["mark"].add(cp)
        if lower(char) != char:
            found["lower"][cp] = lower(char)
        decomposed = nfd(char)
        found["nfd"][cp] = decomposed
        if decomposed == char and (nfd(_ACUTE + char) != _ACUTE + char or nfd(char + _OVERLAY) != char + _OVERLAY):
            found["combining"].add(cp)
    return found


def _probe_icu():
    """What tensorflow-text's NFD (ICU) does to each code point, as `_probe_rust`."""
    def nfd(strings):
        return [s.decode("utf-8") for s in tf_text.normalize_utf8(tf.constant(strings), "NFD").numpy()]

    chars = [chr(cp) for cp in CODE_POINTS]
    decomposed = dict(zip(CODE_POINTS, nfd(chars)))
    after_acute = nfd([_ACUTE + c for c in chars])
    before_overlay = nfd([c + _OVERLAY for c in chars])
    combining = {
        cp
        for cp, a, b in zip(CODE_POINTS, after_acute, before_overlay)
        if decomposed[cp] == chr(cp) and (a != _ACUTE + chr(cp) or b != chr(cp) + _OVERLAY)
    }
    return decomposed, combining


def _protected(rust, icu_nfd, icu_combining):
    """Code points whose NFD (or whose reordering as a combining mark) ICU and Rust disagree on."""
    differ = {cp for cp in CODE_POINTS if icu_nfd[cp] != rust["nfd"][cp]}
    differ |= icu_combining ^ rust["combining"]
    # Controls never reach NFD (dropped first), so they need no placeholder.
    return sorted(differ - rust["control"])


def _check_assumptions(rust, protected):
    """What `_bert_text` relies on; a new tokenizers release could break it."""
    # Lowercasing maps one code point to one, except U+0130 (→ "i̇").
    multi = {cp: s for cp, s in rust["lower"].items() if len(s) != 1}
    assert multi == {0x130: "i\u0307"}, multi
    # CJK spacing commutes with NFD and lowercasing: no code point enters or
    # leaves the CJK ranges under them, so it may run before or after.
    for cp in CODE_POINTS:
        in_cjk = cp in rust["cjk"]
        assert all((ord(c) in rust["cjk"]) == in_cjk for c in rust["nfd"][cp]), hex(cp)
        assert not (in_cjk and cp in rust["lower"]), hex(cp)
    # Placeholders stay inside the private-use block U+E000..U+F8FF.
    assert PLACEHOLDER_BASE + len(protected) <= 0xF8FF
    assert not set(range(PLACEHOLDER_BASE, 0xF900)) - rust["control"]
    # Nothing lowercases into whitespace, controls or punctuation.
    for cp, lowered in rust["lower"].items():
        assert not {ord(c) for c in lowered} & (rust["control"] | rust["whitespace"]), hex(cp)


def _format(name, items, per_line, comment):
    lines = [f"# {comment}", f"{name} = ("]
    for i in range(0, len(items), per_line):
        chunk = items[i : i + per_line]
        lines.append("    " + " ".join(f"({', '.join(_hex(x) for x in item)})," for item in chunk))
    lines.append(")")
    return "\n".join(lines)


def _hex(x):
    return f"0x{x:X}" if x >= 0 else f"-0x{-x:X}"


def main(out_path):
    # Only the generator needs the version string.
    import tokenizers

    rust = _probe_rust()
    icu_nfd, icu_combining = _probe_icu()
    protected = _protected(rust, icu_nfd, icu_combining)
    _check_assumptions(rust, protected)
    lower = {cp: ord(s) for cp, s in rust["lower"].items() if len(s) == 1}
    # Protected marks must still be dropped by accent stripping: their
    # placeholders join the mark class.
    marks = set(rust["mark"]) | {PLACEHOLDER_BASE + i for i, cp in enumerate(protected) if cp in rust["mark"]}
    sections = [
        _format("CONTROL", _ranges(rust["control"]), 6, "Dropped by clean_text (NUL, U+FFFD, Cc, Cf, Co of the crate's tables; not Cn)."),
        _format("WHITESPACE", _ranges(rust["whitespace"] | {0x20}), 6, "Become word boundaries."),
        _format("PUNCTUATION", _ranges(rust["punctuation"]), 6, "Words of their own (BertPreTokenizer)."),
        _format("MARK", _ranges(marks), 6, "Dropped after NFD when stripping accents (the crate's Mn, plus placeholders of protected Mn)."),
        _format("CJK", _ranges(rust["cjk"]), 6, "Words of their own when handle_chinese_chars (note 0x2B920, not 0x2B820)."),
        _format("LOWERCASE", _runs(lower), 4, "Rust char::to_lowercase, one to one, as runs (first, last, step, delta)."),
        _format("NFD_PROTECTED", _ranges(protected), 6, f"Kept from ICU's NFD as placeholders U+{PLACEHOLDER_BASE:04X}+i (the crate does not decompose or reorder them)."),
    ]
    header = (
        f'"""Unicode tables of the Rust BERT normalizer (tokenizers {tokenizers.__version__}). Generated, do not edit.\n\n'
        "Written by `python -m keras_bert.preprocessing._make_bert_unicode_tables`, which\n"
        "asks `tokenizers.normalizers.BertNormalizer` and `pre_tokenizers.BertPreTokenizer`\n"
        'about every code point; see that script for why Python\'s unicodedata is not used.\n"""\n\n'
        f'TOKENIZERS_VERSION = "{tokenizers.__version__}"\n'
        f"PLACEHOLDER_BASE = 0x{PLACEHOLDER_BASE:X}\n"
        '# Lowercasing that yields two code points: "İ" → "i" + combining dot above.\n'
        'LOWERCASE_MULTI = {0x130: "i\\u0307"}\n\n'
    )
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(header + "\n\n".join(sections) + "\n")
    print(f"wrote {out_path}: {len(protected)} protected, {len(lower)} lowercase pairs")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else __file__.replace("_make_bert_unicode_tables.py", "_bert_unicode_tables.py"))
