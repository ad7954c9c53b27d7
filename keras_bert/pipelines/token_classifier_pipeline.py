"""`TokenClassifierPipeline`: entity spans with character offsets into the original text.

    keras_bert.predict_text(tagger, tokenizer, "Ada Lovelace was born in London.")
    # [{"type": "PER", "text": "Ada Lovelace", "start": 0, "end": 12, "score": 0.98},
    #  {"type": "LOC", "text": "London", "start": 25, "end": 31, "score": 0.99}]
"""

import numpy as np
import tensorflow as tf

from keras_bert.metrics.entities import are_entity_tags, get_entities
from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, softmax, text_batch
from keras_bert.preprocessing.tasks.task_features import pack_ids, window_spans


class TokenClassifierPipeline(TaskPipeline):
    """Entity spans (BIO tags decoded) with character offsets into the original text.

    Words are BERT's basic-tokenizer words (runs of letters and digits;
    punctuation marks on their own); each word takes the tag predicted on its
    first wordpiece, and entities are decoded from the word tags as seqeval does
    (when the labels are entity tags: "O", B/I/E/S-TYPE; a tagger with other
    labels, such as part-of-speech, gets its word tags and no entities).
    Texts longer than the sequence length are not cut off: overlapping
    windows slide over them and a token's logits are averaged over its windows.

    Args:
        model: a `BertTokenClassifier` with `label_names` (BIO tags).
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 128, at most the model's).
        window_stride: tokens between window starts for texts longer than one
            window (default half a window; 0: windows side by side, no
            overlap); a token's logits are averaged over the windows that
            hold it. The exported SavedModel's `serve_text` does the same.
        batch_size: sequences per forward pass.

    Call arguments:
        texts: a string or a list of strings.
        return_words: also return every word with its span and tag.

    Returns:
        For each text, a list of `{"type", "text", "start", "end", "score"}`
        (`score` = mean probability of the entity's word tags); with
        `return_words`, a dict `{"entities": [...], "words": [{"text", "start", "end", "tag", "score"}]}`.
        Offsets index the original string (`text[start:end]`).
    """

    def __init__(self, model, tokenizer, sequence_length=None, window_stride=None, batch_size=32):
        super().__init__(model, tokenizer, sequence_length, batch_size)
        if not model.label_names:
            raise ValueError("The token classifier has no `label_names`; a pipeline needs its BIO tag names.")
        self.window_stride = (self.sequence_length - 2) // 2 if window_stride is None else window_stride
        self._entity_tags = are_entity_tags(model.label_names)

    def __call__(self, texts, return_words=False):
        texts, single = text_batch(texts)
        check_texts(texts)
        if not texts:
            return []
        ids, starts, ends = self.tokenizer.tokenize_with_offsets(tf.constant(texts), unit="char")
        word_pieces = self.tokenizer.tokenize_words(tf.constant(texts))
        ids, starts, ends = ids.to_list(), starts.to_list(), ends.to_list()
        word_lengths = word_pieces.row_lengths(axis=2).to_list()
        for t, lengths in enumerate(word_lengths):
            if sum(lengths) != len(ids[t]):  # both come from one tokenization; a mismatch is a tokenizer bug
                raise ValueError(f"text {t}: {len(ids[t])} tokens but its words hold {sum(lengths)} wordpieces")
        token_logits = self._token_logits(ids)
        results = []
        for t, text in enumerate(texts):
            words = self._words(text, token_logits[t], word_lengths[t], starts[t], ends[t])
            # Labels that are not entity tags (part-of-speech "NOUN", "VERB") have no entities to decode.
            entities = _entities(text, words) if self._entity_tags else []
            results.append({"entities": entities, "words": words} if return_words else entities)
        return results[0] if single else results

    def input_stats(self, texts):
        """How each text is read, without running the model.

        Returns:
            For each text, `{"tokens", "windows", "truncated_tokens"}` (the
            tagger windows every text, so `truncated_tokens` is 0). A dict for
            a single text.
        """
        texts, single = text_batch(texts)
        check_texts(texts)
        if not texts:
            return []
        ids = self.tokenizer.tokenize(tf.constant(texts)).to_list()
        stats = [
            {"tokens": len(tokens), "windows": len(self._spans(len(tokens))), "truncated_tokens": 0} for tokens in ids
        ]
        return stats[0] if single else stats

    def _spans(self, num_tokens):
        window = self.sequence_length - 2
        return window_spans(num_tokens, window, min(self.window_stride or window, window))

    def _token_logits(self, ids):
        """Per text, `(num_tokens, num_tags)` logits averaged over the windows that hold each token."""
        rows, owners = [], []
        for t, tokens in enumerate(ids):
            for s, e in self._spans(len(tokens)):
                rows.append(pack_ids(tokens[s:e], None, self.sequence_length, self.tokenizer.cls_token_id,
                                     self.tokenizer.sep_token_id, self.tokenizer.pad_token_id))
                owners.append((t, s, e))
        inputs = ("token_ids", "segment_ids", "padding_mask")
        x = {name: np.stack([r[i] for r in rows]) for i, name in enumerate(inputs)}
        logits = self._predict_trimmed(x, per_token=True)
        num_tags = len(self.model.label_names)
        sums = [np.zeros((len(tokens), num_tags)) for tokens in ids]
        counts = [np.zeros((len(tokens), 1)) for tokens in ids]
        for row, (t, s, e) in zip(logits, owners):
            sums[t][s:e] += row[1 : 1 + e - s]  # +1: after [CLS]
            counts[t][s:e] += 1
        return [total / np.maximum(count, 1) for total, count in zip(sums, counts)]

    def _words(self, text, logits, word_lengths, starts, ends):
        """The words of one text, each tagged by its first wordpiece: `[{"text", "start", "end", "tag", "score"}]`."""
        names = self.model.label_names
        probabilities = softmax(logits) if len(logits) else np.zeros((0, len(names)))
        words, token = [], 0
        for length in word_lengths:
            if length == 0:
                continue
            p = probabilities[token]
            start, end = starts[token], ends[token + length - 1]
            words.append(
                {"text": text[start:end], "start": start, "end": end, "tag": names[int(np.argmax(p))],
                 "score": float(np.max(p))}
            )
            token += length
        return words


def _entities(text, words):
    """Entities decoded from tagged words as seqeval does: `[{"type", "text", "start", "end", "score"}]`."""
    entities = []
    for entity_type, first, last in get_entities([w["tag"] for w in words]):
        start, end = words[first]["start"], words[last]["end"]
        score = float(np.mean([w["score"] for w in words[first : last + 1]]))
        entities.append({"type": entity_type, "text": text[start:end], "start": start, "end": end, "score": score})
    return entities
