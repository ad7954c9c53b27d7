"""Do keras_bert's ALBERT and RoBERTa tokenizers give transformers' ids?

Runs EVERY non-empty line of ../shared/data/austen/*.txt and the text column
of ../shared/data/sentiment/*.txt through keras_bert's `SentencePieceTokenizer`
and `BytePairTokenizer` and through transformers' `AlbertTokenizer` and
`RobertaTokenizer` (the Rust "fast" tokenizers, the only ones transformers 5
has) loaded from the same files, and prints the share of lines whose id
sequences are identical, the differing lines grouped by kind, and lines/s.

    .venv/bin/python benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py
    .venv/bin/python benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py --albert path/to/albert-base-v2 --roberta path/to/roberta-base

By default it uses the test vocabularies trained on the Austen novels
(tests/fixtures/family_tokenizers, see make_fixtures.py there).
"""

import argparse
import collections
import importlib.util
import os
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "family_tokenizers"


def read_lines(every=1):
    """(source, text) of every non-empty line of ../shared/data (tokenizer_agreement.py's reader)."""
    spec = importlib.util.spec_from_file_location("tokenizer_agreement", Path(__file__).parents[1] / "tokenizer_agreement" / "tokenizer_agreement.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.read_lines(every=every)


def load(family, folder):
    """(ours, transformers') tokenizers of `family` ("albert" or "roberta") from one folder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if family == "albert":
        from transformers import AlbertTokenizer

        from keras_bert.preprocessing.sentence_piece_tokenizer import SentencePieceTokenizer

        return SentencePieceTokenizer.from_pretrained(folder), AlbertTokenizer.from_pretrained(folder)
    from transformers import RobertaTokenizer

    from keras_bert.preprocessing.byte_pair_tokenizer import BytePairTokenizer

    return BytePairTokenizer.from_pretrained(folder), RobertaTokenizer.from_pretrained(folder)


def tokenize_ours(tokenizer, texts, batch_size=1024):
    ids = []
    for start in range(0, len(texts), batch_size):
        ids += tokenizer.tokenize(texts[start : start + batch_size]).to_list()
    return ids


def kind(text):
    """A coarse label for a differing line: what in it is unusual."""
    if any(a == b and not a.isalnum() and not a.isspace() for a, b in zip(text, text[1:])):
        return "repeated symbols (e.g. ---)"
    if any(ord(c) > 127 for c in text):
        categories = sorted({unicodedata.category(c) for c in text if ord(c) > 127})
        return "non-ASCII " + "/".join(categories)
    if any(c.isdigit() for c in text):
        return "digits"
    return "other"


def compare(texts, ours, reference):
    """Indices of `texts` whose ids differ between ours and the reference (no special tokens added)."""
    mine = tokenize_ours(ours, texts)
    theirs = reference(texts, add_special_tokens=False)["input_ids"]
    return [i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b], mine, theirs


def report(family, folder, pairs, show):
    texts = [text for _, text in pairs]
    ours, reference = load(family, folder)
    tokenize_ours(ours, texts[:64])  # tracing, not timed
    start = time.perf_counter()
    diffs, mine, theirs = compare(texts, ours, reference)
    both = time.perf_counter() - start
    start = time.perf_counter()
    reference(texts, add_special_tokens=False)
    reference_s = time.perf_counter() - start
    ours_s = both - reference_s
    share = 1 - len(diffs) / len(texts)
    print(f"\n== {family}: {folder}")
    print(f"identical ids: {len(texts) - len(diffs)}/{len(texts)} lines = {100 * share:.4f}%")
    print(f"lines/s: ours {len(texts) / ours_s:,.0f}, transformers {len(texts) / reference_s:,.0f}")
    kinds = collections.Counter(kind(texts[i]) for i in diffs)
    for name, count in kinds.most_common():
        print(f"  {count:6d}  {name}")
    for i in diffs[:show]:
        print(f"  [{pairs[i][0]}] {texts[i]!r}")
        print(f"    ours:         {reference.convert_ids_to_tokens(mine[i])}")
        print(f"    transformers: {reference.convert_ids_to_tokens(theirs[i])}")
    return share


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--albert", default=str(FIXTURES / "albert"), help="folder with spiece.model")
    parser.add_argument("--roberta", default=str(FIXTURES / "roberta"), help="folder with vocab.json + merges.txt")
    parser.add_argument("--every", type=int, default=1, help="use every n-th line only")
    parser.add_argument("--show", type=int, default=10, help="differing lines to print")
    args = parser.parse_args(argv)
    pairs = read_lines(every=args.every)
    print(f"{len(pairs)} lines from {len({s for s, _ in pairs})} files")
    for family, folder in (("albert", args.albert), ("roberta", args.roberta)):
        report(family, folder, pairs, args.show)


if __name__ == "__main__":
    sys.exit(main())
