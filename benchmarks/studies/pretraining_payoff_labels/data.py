"""The study's text, its splits and its pretraining corpus: plain Python, no TensorFlow, no keras.

Both halves of the study use it: `prepare.py` (here, with TensorFlow) to decide what is tokenized
where, and the tests, which check the splits and the pretraining text against it.

Splits of the movie-review sentences (../shared/data/sentiment/movieReviewSnippets_GroundTruth.txt):
- sentences rated exactly 0 have no sign and are dropped; a sentence whose text (lowercased, spaces
  collapsed) already appeared earlier in the file is dropped too, so one text never lands in two splits;
- test: every sentence whose id is a multiple of 10 (the repository's fixed held-out split, the one
  `benchmarks/finetune_sentiment.py` reports on);
- validation: `validation_size` sentences drawn (seeded) from the others;
- train: the rest, in a seeded order; a label budget of n takes its first n (100 within 300 within
  1,000 within all).
Only train sentences, labels removed, are ever pretraining text.

Austen (../shared/data/austen/*.txt): paragraphs (blank-line separated, hard-wrapped lines joined);
the last `heldout_share` of each novel's paragraphs is held out from pretraining and from the
vocabulary, to score masked-token accuracy on prose the model never saw.
"""

import hashlib
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
SENTIMENT = DATA / "sentiment" / "movieReviewSnippets_GroundTruth.txt"
AUSTEN = DATA / "austen"
SPLITS = ("train", "validation", "test")


def normalized(text):
    """The text as duplicates are detected: lowercased, runs of white space as one space."""
    return " ".join(text.lower().split())


def read_sentences(path=SENTIMENT):
    """`(rows, counts)`: rows are dicts {"id", "text", "label"} (label 1 = positive mean rating)."""
    rows, seen, counts = [], set(), {"lines": 0, "dropped_zero_rating": 0, "dropped_duplicate_text": 0}
    with open(path, encoding="utf-8", newline="") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            counts["lines"] += 1
            fields = line.split("\t")
            if len(fields) != 3:
                raise ValueError(f"{path}:{number}: expected id, rating, text; found {len(fields)} fields")
            identifier, rating, text = int(fields[0]), float(fields[1]), " ".join(fields[2].split())
            if rating == 0:
                counts["dropped_zero_rating"] += 1
                continue
            if normalized(text) in seen:
                counts["dropped_duplicate_text"] += 1
                continue
            seen.add(normalized(text))
            rows.append({"id": identifier, "text": text, "label": int(rating > 0)})
    return rows, counts


def split_rows(rows, validation_size=1000, seed=0):
    """{"train", "validation", "test"} -> row indices into `rows` (train in its seeded budget order).

    Raises:
        ValueError: `validation_size` leaves no training sentence.
    """
    test = [i for i, row in enumerate(rows) if row["id"] % 10 == 0]
    rest = np.array([i for i, row in enumerate(rows) if row["id"] % 10 != 0])
    if not 0 < validation_size < len(rest):
        raise ValueError(f"validation_size must be in (0, {len(rest)}); received {validation_size}")
    order = rest[np.random.default_rng(seed).permutation(len(rest))]
    return {"train": [int(i) for i in order[validation_size:]],
            "validation": sorted(int(i) for i in order[:validation_size]), "test": test}


def budget_sizes(budgets, num_train):
    """`["100", "300", "all"]` -> {"100": 100, "300": 300, "all": num_train}; a budget above num_train is refused."""
    sizes = {}
    for budget in budgets:
        size = num_train if str(budget) == "all" else int(budget)
        if not 0 < size <= num_train:
            raise ValueError(f"label budget {budget!r} must be 'all' or in [1, {num_train}]")
        sizes[str(budget)] = size
    return sizes


def austen_paragraphs(folder=AUSTEN, heldout_share=0.04):
    """`(pretraining, heldout)`: {novel file name: [paragraph, ...]}, each novel's last paragraphs held out."""
    pretraining, heldout = {}, {}
    for path in sorted(Path(folder).glob("*.txt")):
        paragraphs, lines = [], []
        for line in path.read_text(encoding="utf-8").splitlines() + [""]:
            if line.strip():
                lines.append(line.strip())
            elif lines:
                paragraphs.append(" ".join(lines))
                lines = []
        cut = len(paragraphs) - max(1, int(round(len(paragraphs) * heldout_share)))
        pretraining[path.name], heldout[path.name] = paragraphs[:cut], paragraphs[cut:]
    if not pretraining:
        raise ValueError(f"no Austen novels (*.txt) in {folder}")
    return pretraining, heldout


def text_digest(texts):
    """sha256 of the normalized texts, one per line: names a set of sentences without copying them."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(normalized(text).encode("utf-8") + b"\n")
    return digest.hexdigest()


def pack_rows(sequences, length, cls_id, sep_id, pad_id=0):
    """Whole sequences (lists of ids) packed greedily into rows `[CLS] s1 [SEP] s2 [SEP] ... [PAD]...`.

    A sequence longer than a row is cut to fit one row alone. Returns an int array `(rows, length)`.
    """
    rows, row = [], [cls_id]
    for sequence in sequences:
        piece = list(sequence[: length - 2]) + [sep_id]
        if len(row) + len(piece) > length:
            rows.append(row)
            row = [cls_id]
        row.extend(piece)
    if len(row) > 1:
        rows.append(row)
    packed = np.full((len(rows), length), pad_id, dtype=np.int64)
    for i, ids in enumerate(rows):
        packed[i, : len(ids)] = ids
    return packed


def chunk_stream(ids, length, cls_id, sep_id, pad_id=0):
    """A stream of ids cut into rows `[CLS] chunk [SEP]` of `length` (the last row padded)."""
    body = length - 2
    num_rows = -(-len(ids) // body)
    packed = np.full((num_rows, length), pad_id, dtype=np.int64)
    for i in range(num_rows):
        chunk = ids[i * body : (i + 1) * body]
        packed[i, 0], packed[i, 1 : 1 + len(chunk)], packed[i, 1 + len(chunk)] = cls_id, chunk, sep_id
    return packed


def classification_rows(sequences, length, cls_id, sep_id, pad_id=0):
    """`([CLS] s [SEP]` padded to `length`, truncated count): the fine-tuning inputs, one sentence a row."""
    token_ids = np.full((len(sequences), length), pad_id, dtype=np.int64)
    truncated = 0
    for i, sequence in enumerate(sequences):
        truncated += len(sequence) > length - 2
        ids = [cls_id] + list(sequence[: length - 2]) + [sep_id]
        token_ids[i, : len(ids)] = ids
    return token_ids, truncated
