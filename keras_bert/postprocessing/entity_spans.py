"""Entity spans from a token classifier's per-token probabilities: word tags, then BIO(ES) decoding.

One definition, in TensorFlow ops, of how `TokenClassifierPipeline` (run
eagerly) and the exported SavedModel's `serve_text` (traced) read entities:

- Words are the tokenizer's words (`tokenize_words`: BERT's basic-tokenizer
  words, byte-level BPE's pre-tokenizer words); a word that became no token
  is skipped. Each word takes the most
  probable tag of its first wordpiece, with that probability as its score.
- Entities are decoded from the word tags as seqeval's default mode does
  (`keras_bert.metrics.get_entities` with `scheme=None`): a tag other than
  "O" belongs to an entity; an entity ends after an `E-` or `S-` tag, and
  before a `B-`, `S-` or "O" tag, a tag of another type or the end of the
  text. An entity's score is the mean of its words' scores. Labels that are
  not all entity tags (part-of-speech "NOUN", "VERB") give no entities.
"""

import tensorflow as tf

from keras_bert.metrics.entities import are_entity_tags


def check_tagging_tokenizer(tokenizer, who):
    """Raises ValueError unless `tokenizer` gives words (`tokenize_words`) and offsets (`tokenize_with_offsets`):
    entities are read word by word and mapped back to characters (SentencePiece has neither)."""
    missing = [name for name in ("tokenize_words", "tokenize_with_offsets") if not hasattr(tokenizer, name)]
    if missing:
        raise ValueError(
            f"{who} reads entities word by word and maps them back to characters, which needs a tokenizer with "
            f"`tokenize_words` and `tokenize_with_offsets` (BertTokenizer, ModernBertTokenizer); "
            f"{type(tokenizer).__name__} lacks {' and '.join(f'`{name}`' for name in missing)}."
        )


def tagged_words(words, token_probabilities, row_starts):
    """Each word's tag and score, and where its tokens are.

    Args:
        words: ragged int `(batch_size, (words), (wordpieces))`, the
            tokenizer's `tokenize_words` of the texts.
        token_probabilities: float `(num_tokens, num_tags)`, every token of the batch, row after row.
        row_starts: int `(batch_size,)`, each row's first token in the flat tokens.

    Returns:
        A dict of `(num_words,)` tensors over the words that have tokens, row
        after row: `row` (int64), `first_token`, `last_token` (int64, the
        word's first and last token within its row), `tag` (int64) and
        `score` (the tag's probability).
    """
    pieces = tf.cast(words.row_lengths(axis=2), tf.int64)  # (batch, (words))
    row = pieces.value_rowids()
    end_in_row = tf.cumsum(pieces, axis=1).flat_values  # exclusive end, per row
    keep = pieces.flat_values > 0
    row = tf.boolean_mask(row, keep)
    first = tf.boolean_mask(end_in_row - pieces.flat_values, keep)
    last = tf.boolean_mask(end_in_row, keep) - 1
    probabilities = tf.gather(token_probabilities, tf.gather(tf.cast(row_starts, tf.int64), row) + first)
    return {
        "row": row,
        "first_token": first,
        "last_token": last,
        "tag": tf.argmax(probabilities, axis=-1),
        "score": tf.reduce_max(probabilities, axis=-1),
    }


def _tag_parts(label_names):
    """`(prefixes, types)`: "O" / "B" / "I" / "E" / "S" and the entity type of every label ("O" for all if
    the labels are not entity tags)."""
    if not are_entity_tags(label_names):
        return ["O"] * len(label_names), [""] * len(label_names)
    prefixes, types = [], []
    for name in label_names:
        prefix, _, entity_type = name.partition("-")
        prefixes.append(prefix)
        types.append("" if name == "O" else entity_type or "_")
    return prefixes, types


def entity_spans(word_row, word_tag, word_score, label_names):
    """Entities decoded from tagged words (see the module docstring).

    Args:
        word_row: int64 `(num_words,)`, the row of each word (in order).
        word_tag: int64 `(num_words,)`, each word's tag id.
        word_score: float `(num_words,)`, each word's tag probability.
        label_names: the tag names (a Python list), in id order.

    Returns:
        A dict of `(num_entities,)` tensors, entities in order: `row` (int64),
        `first_word`, `last_word` (int64, indices into the words),
        `type` (string) and `score` (the mean of its words' scores).
    """
    prefixes, types = _tag_parts(list(label_names))
    prefix = tf.gather(tf.constant(prefixes), word_tag)
    entity_type = tf.gather(tf.constant(types), word_tag)
    in_entity = prefix != "O"
    after = tf.concat([[False], word_row[1:] == word_row[:-1]], axis=0)  # the previous word is in the same row
    previous_prefix = tf.concat([["O"], prefix[:-1]], axis=0)
    previous_type = tf.concat([[""], entity_type[:-1]], axis=0)
    previous_closes = (previous_prefix == "O") | (previous_prefix == "E") | (previous_prefix == "S")
    begins = in_entity & (
        ~after | previous_closes | (prefix == "B") | (prefix == "S") | (entity_type != previous_type)
    )
    entity_of_word = tf.boolean_mask(tf.cumsum(tf.cast(begins, tf.int64)) - 1, in_entity)
    count = tf.reduce_sum(tf.cast(begins, tf.int64))
    word_index = tf.range(tf.size(word_row, out_type=tf.int64))

    def per_entity(values, reduce):
        return reduce(tf.boolean_mask(values, in_entity), entity_of_word, num_segments=count)

    return {
        "row": tf.boolean_mask(word_row, begins),
        "first_word": tf.boolean_mask(word_index, begins),
        "last_word": per_entity(word_index, tf.math.unsorted_segment_max),
        "type": tf.boolean_mask(entity_type, begins),
        "score": per_entity(word_score, tf.math.unsorted_segment_mean),
    }


def read_entities(token_logits, words, row_starts, label_names):
    """Token logits → `(token_probabilities, tagged_words(...), entity_spans(...))`: the whole reading.

    Args:
        token_logits: float `(num_tokens, num_tags)`, every token of the batch
            (e.g. `text_windows.token_mean_over_windows`'s), row after row.
        words, row_starts: as `tagged_words` takes them.
        label_names: the tag names, in id order.

    Returns:
        float64 token probabilities `(num_tokens, num_tags)` (the softmax of
        `token_logits`), the tagged words and the entities.
    """
    token_probabilities = tf.nn.softmax(tf.cast(token_logits, tf.float64), axis=-1)
    tagged = tagged_words(words, token_probabilities, row_starts)
    return token_probabilities, tagged, entity_spans(tagged["row"], tagged["tag"], tagged["score"], label_names)
