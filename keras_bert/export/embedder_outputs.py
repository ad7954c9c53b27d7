"""What an exported `BertTextEmbedder` returns: one embedding per raw text, computed in the graph.

| signature         | inputs                                   | outputs                                      |
|-------------------|------------------------------------------|----------------------------------------------|
| `serve_token_ids` | token_ids, segment_ids, padding_mask     | embeddings `(batch, hidden_dim)`              |
| `serve_text`      | text                                     | embeddings, num_tokens, num_windows, num_truncated_tokens |

Texts are read as `TextEmbedderPipeline` reads them: tokenized, cut to
`sequence_length` tokens ([CLS] and [SEP] included; an embedding is one
sequence's, so nothing is windowed) and packed to the batch's longest row.
"""

import tensorflow as tf

from keras_bert.export.task_outputs import _stats


def text_embedder_outputs(module, text):
    """`{"embeddings", "num_tokens", "num_windows", "num_truncated_tokens"}` for a batch of strings."""
    lengths = tf.cast(module.tokenizer.tokenize(text).row_lengths(), tf.int32)
    embeddings = module._call_model(module.pack_texts(text))  # (batch, hidden), float32
    budget = module._sequence_length - 2  # [CLS] and [SEP]
    return {"embeddings": embeddings, **_stats(lengths, tf.ones_like(lengths), tf.maximum(lengths - budget, 0))}
