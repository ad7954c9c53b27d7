"""BERT's basic text cleanup as RE2 character classes and TF string ops.

Private helper of `BertTokenizer` and `learn_vocabulary`. Hugging Face's
Python `BasicTokenizer` (and Google's original `tokenization.py`) decide what
is a control character, whitespace, punctuation or an accent with
`unicodedata.category`. We build the same sets from the running Python's
`unicodedata` tables, so the regexes below classify every code point exactly as
the reference does on this Python, new or unassigned code points included
(RE2's own `\\p{P}` tables follow a different Unicode version).
"""

import functools
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text

# The "Chinese character" blocks of BERT's `_is_chinese_char`.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _to_class(code_points):
    """Sorted code points → an RE2 character class such as `[\\x{21}-\\x{2F}]`."""
    ranges = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    parts = []
    for lo, hi in ranges:
        parts.append(f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}")
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def character_classes():
    """Returns a dict of RE2 classes: control, whitespace, punctuation, mark, cjk."""
    control, whitespace, punctuation, mark = [], [], [], []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # Surrogates cannot occur in UTF-8 text.
        char = chr(cp)
        category = unicodedata.category(char)
        if char in "\t\n\r":
            whitespace.append(cp)
        elif cp == 0 or cp == 0xFFFD or category.startswith("C"):
            control.append(cp)
        # Zs is BERT's whitespace; Zl/Zp survive `_clean_text` but Python's
        # `str.split()` then splits on them, so they separate words too.
        elif category in ("Zs", "Zl", "Zp") or char.isspace():
            whitespace.append(cp)
        elif (
            33 <= cp <= 47
            or 58 <= cp <= 64
            or 91 <= cp <= 96
            or 123 <= cp <= 126
            or category.startswith("P")
        ):
            punctuation.append(cp)
        elif category == "Mn":
            mark.append(cp)
    cjk = [cp for lo, hi in _CJK_RANGES for cp in range(lo, hi + 1)]
    return {
        "control": _to_class(control),
        "whitespace": _to_class(whitespace),
        "punctuation": _to_class(punctuation),
        "mark": _to_class(mark),
        "cjk": _to_class(cjk),
    }


def normalize(text, lowercase, strip_accents, split_cjk):
    """BERT's basic cleanup of a string tensor, word boundaries as spaces.

    The order follows Hugging Face's `BasicTokenizer`: drop control characters
    (before lowercasing, because a dropped character can change where a Greek
    capital sigma counts as word-final), lowercase, NFD + drop the Mn marks,
    and only then put spaces around punctuation (NFD can create ASCII
    punctuation, e.g. U+1FEF → "`") and CJK characters. Every transformation
    acts on one character at a time, except lowercasing, whose only
    context-dependent rule (final sigma) keeps byte lengths; that is what lets
    `BertTokenizer.tokenize_with_offsets` map positions back per character.

    Args:
        text: string tensor of any shape.
        lowercase: whether to lowercase.
        strip_accents: whether to NFD-decompose and drop combining marks (Mn).
        split_cjk: whether CJK ideographs become words of their own.

    Returns:
        A string tensor of the same shape; words are separated by runs of " ".
    """
    classes = character_classes()
    # Invalid UTF-8 becomes U+FFFD, which the control class then drops
    # (Python references decode with errors="replace" and drop U+FFFD too).
    text = tf.strings.unicode_transcode(
        text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )
    text = tf.strings.regex_replace(text, classes["control"], "")
    if lowercase:
        # Hugging Face's tokenizers (the default `BertTokenizer` since
        # transformers 5) lowercase one character at a time; ICU would apply
        # the Greek final-sigma rule (Σ → ς at a word end). Lowercasing Σ
        # ourselves first keeps every character independent.
        text = tf.strings.regex_replace(text, "\u03a3", "\u03c3")
        text = tf.strings.lower(text, encoding="utf-8")
    if strip_accents:
        text = tf_text.normalize_utf8(text, "NFD")
        text = tf.strings.regex_replace(text, classes["mark"], "")
    separate = classes["punctuation"]
    if split_cjk:
        separate = separate[:-1] + classes["cjk"][1:]
    # One pass: punctuation/CJK get spaces around them, whitespace becomes a
    # space (an empty group), and runs of spaces are harmless for splitting.
    return tf.strings.regex_replace(
        text, f"({separate})|{classes['whitespace']}", r" \1 "
    )
