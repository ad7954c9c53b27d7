"""Pretrain a tiny BERT (MLM + NSP) on real English text, from nothing (`make demo-pretraining`).

Runs on a fresh machine with no data beside the repository: the text comes
from PyPI (the vaderSentiment 3.3.2 source archive, checksum-verified; see
`keras_bert.examples.sentiment_data`): about 23,700 human-written sentences from movie
reviews, New York Times editorials, Amazon reviews and tweets. The demo
learns a WordPiece vocabulary from them, generates MLM + NSP examples with
whole-word masking, pretrains a `tiny` BERT with a Keras progress bar, reports
held-out MLM and NSP accuracy next to the trivial baselines, and saves
`saved_models/demo_pretrained.keras`.

    python -m keras_bert.examples.pretraining_demo [--steps 600] [--out saved_models]
"""

import argparse
import os
import shutil
import tempfile
import time

import keras

from keras_bert.examples.sentiment_data import fetch_vader_sentiment, read_rated_sentences
from keras_bert.jobs.pretrain import pretrain

SENTENCES_PER_DOCUMENT = 8


def write_corpus(folder, cache_dir=None):
    """Writes train.txt / heldout.txt: documents of consecutive sentences, one sentence a line.

    Sentences of one source file follow each other, so a "document" is a run
    of 8 neighbouring snippets of the same kind; every 10th document is held out.
    """
    paths = fetch_vader_sentiment(cache_dir)
    train, heldout = [], []
    for name in sorted(paths):
        sentences = [text for text, _ in read_rated_sentences(paths[name])]
        for i in range(0, len(sentences), SENTENCES_PER_DOCUMENT):
            document = "\n".join(s.replace("\n", " ") for s in sentences[i : i + SENTENCES_PER_DOCUMENT])
            (heldout if (i // SENTENCES_PER_DOCUMENT) % 10 == 9 else train).append(document)
    files = {}
    for split, documents in (("train", train), ("heldout", heldout)):
        files[split] = os.path.join(folder, f"{split}.txt")
        with open(files[split], "w", encoding="utf-8") as f:
            f.write("\n\n".join(documents) + "\n")
    return files, len(train), len(heldout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--vocabulary-size", type=int, default=4000)
    parser.add_argument("--out", default="saved_models")
    parser.add_argument("--cache-dir", default=None, help="where the downloaded text is kept")
    args = parser.parse_args(argv)

    # defers TensorFlow (tensorflow-text learns the vocabulary): --help answers at once
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    started = time.time()
    print(f"keras-bert demo on the {keras.backend.backend()} backend")
    work = tempfile.mkdtemp(prefix="keras-bert-demo-")
    try:
        files, num_train, num_heldout = write_corpus(work, args.cache_dir)
        print(f"corpus: {num_train} training documents, {num_heldout} held-out documents")
        vocabulary = learn_vocabulary([files["train"]], args.vocabulary_size, lowercase=True, verbose=True)
        vocab_path = os.path.join(work, "vocab.txt")
        write_vocabulary(vocabulary, vocab_path)
        run_dir = os.path.join(work, "run")
        summary = pretrain(
            corpus=[files["train"]],
            eval_corpus=[files["heldout"]],
            vocabulary=vocab_path,
            output_dir=run_dir,
            size="tiny",
            sequence_length=64,
            batch_size=32,
            steps=args.steps,
            checkpoint_every=args.steps // 6 if args.steps % 6 == 0 else None,
            masking="whole-word",
            learning_rate=1e-3,
            warmup_steps=args.steps // 10,
            document_boundary="blank_line",
            line_format="sentence_per_line",
            tensorboard=False,
        )
        os.makedirs(args.out, exist_ok=True)
        target = os.path.join(args.out, "demo_pretrained.keras")
        shutil.copyfile(os.path.join(run_dir, "model.keras"), target)
        shutil.copyfile(vocab_path, os.path.join(args.out, "demo_vocab.txt"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    final, baselines = summary["final_metrics"], summary["baselines"]
    print()
    print(f"held-out MLM accuracy: {final['val_mlm_accuracy']:.3f}  "
          f"(always the most frequent token: {baselines['val_mlm_accuracy_most_frequent_token']:.3f})")
    print(f"held-out NSP accuracy: {final['val_nsp_accuracy']:.3f}  "
          f"(always the majority label: {baselines['val_nsp_accuracy_majority_label']:.3f})")
    print(f"saved {target} and {os.path.join(args.out, 'demo_vocab.txt')} in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
