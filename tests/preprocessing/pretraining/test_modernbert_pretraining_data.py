"""ModernBERT's pretraining data: byte-level BPE word starts, and packed rows that never mix documents in a row's
`[CLS] ... [SEP]` (so, with `sequence_ids`, packed documents do not attend to each other)."""

import numpy as np
import pytest

from keras_bert.preprocessing.pretraining import create_full_sentence_rows, pack_pairs, tokenize_documents
from preprocessing_helpers import ONE_BACKEND_REASON, write_modernbert_tokenizer_folder

pytestmark = pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
CLS, SEP, PAD = 1, 2, 0


def test_packed_full_sentence_rows_hold_one_document_each():
    # Documents of 1-3 sentences, their ids telling which document they are from (100 * (document + 1) + k).
    documents = [[np.full(n, 100 * (d + 1) + k, np.int32) for k, n in enumerate(sizes)]
                 for d, sizes in enumerate([[3, 2], [4], [2, 2, 2], [5], [20, 9]])]
    crossing = create_full_sentence_rows(documents, 16, CLS, SEP, PAD, seed=0)
    rows = create_full_sentence_rows(documents, 16, CLS, SEP, PAD, seed=0, cross_documents=False)
    assert len(crossing["token_ids"]) < len(rows["token_ids"])  # RoBERTa's rows fill up across documents
    packed = pack_pairs(rows, max_sequences_per_pack=3, pad_token_id=PAD)
    assert len(packed["token_ids"]) < len(rows["token_ids"])  # short documents share rows
    for tokens, sequences, positions in zip(packed["token_ids"], packed["sequence_ids"], packed["position_ids"]):
        for number in range(1, sequences.max() + 1):
            piece = tokens[sequences == number]
            assert piece[0] == CLS and piece[-1] == SEP and SEP not in piece[1:-1]  # one document, no separator
            assert len(set(piece[1:-1] // 100)) == 1
            np.testing.assert_array_equal(positions[sequences == number], np.arange(len(piece)))


def test_byte_level_bpe_word_starts(tmp_path):
    from keras_bert import ModernBertTokenizer

    tokenizer = ModernBertTokenizer.from_pretrained(write_modernbert_tokenizer_folder(tmp_path, vocab_size=400))
    token_documents, start_documents, _ = tokenize_documents([["Anne Elliot was walking home."]], tokenizer)
    (ids,), (starts,) = token_documents[0], start_documents[0]
    vocabulary = tokenizer.get_vocabulary()
    # A word starts at the sentence's first token and at every token that carries the space before it ("Ġ").
    expected = [1] + [int(vocabulary[i].startswith("\u0120")) for i in ids[1:]]
    np.testing.assert_array_equal(starts, expected)
    assert sum(expected) == 5 and len(ids) > 5  # five words, some cut into several tokens
