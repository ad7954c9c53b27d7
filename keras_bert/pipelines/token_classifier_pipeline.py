"""`TokenClassifierPipeline`: entity spans with character offsets into the original text.

    keras_bert.predict_text(tagger, tokenizer, "Ada Lovelace was born in London.")
    # [{"type": "PER", "text": "Ada Lovelace", "start": 0, "end": 12, "score": 0.98},
    #  {"type": "LOC", "text": "London", "start": 25, "end": 31, "score": 0.99}]
"""

import tensorflow as tf

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, reading_report, text_batch
from keras_bert.postprocessing import entity_spans, text_windows
from keras_bert.preprocessing.trimmed_offsets import trimmed_offsets


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
        if tokenizer is not None:  # None: the model's inputs are packed elsewhere (the base's `_predict_trimmed`)
            entity_spans.check_tagging_tokenizer(self.tokenizer, "TokenClassifierPipeline")
        self.window_stride = (self.sequence_length - 2) // 2 if window_stride is None else window_stride

    def __call__(self, texts, return_words=False):
        texts, single = text_batch(texts)
        check_texts(texts)
        if not texts:
            return []
        strings = tf.constant(texts)
        ids, starts, ends, _, _ = trimmed_offsets(self.tokenizer, strings)
        words = self.tokenizer.tokenize_words(strings)
        pieces = tf.reduce_sum(words.row_lengths(axis=2), axis=1).numpy()
        for t, (n, m) in enumerate(zip(ids.row_lengths().numpy(), pieces)):
            if n != m:  # both come from one tokenization; a mismatch is a tokenizer bug
                raise ValueError(f"text {t}: {n} tokens but its words hold {m} wordpieces")
        _, tagged, entities = entity_spans.read_entities(
            self._token_logits(ids), words, ids.row_starts(), self.model.label_names
        )
        word_rows = self._words(texts, _numpy(tagged), starts.to_list(), ends.to_list())
        entity_rows = _entities(texts, _numpy(entities), [w for row in word_rows for w in row])
        results = [{"entities": e, "words": w} if return_words else e for e, w in zip(entity_rows, word_rows)]
        return results[0] if single else results

    def _token_logits(self, ids):
        """`(num_tokens, num_tags)`: each token's logits averaged over the windows that hold it."""
        windows = text_windows.windows_of(ids, self.sequence_length, self.window_stride)
        x = {k: v.numpy() for k, v in self.packer(windows["first"]).items()}
        return text_windows.token_mean_over_windows(
            self._predict_trimmed(x, per_token=True), windows["owner"], windows["start"], windows["length"],
            ids.row_starts(), tf.size(ids.flat_values),
        )

    def _words(self, texts, tagged, starts, ends):
        """Per text, its tagged words `[{"text", "start", "end", "tag", "score"}]`."""
        names = self.model.label_names
        rows = [[] for _ in texts]
        columns = (tagged[k] for k in ("row", "first_token", "last_token", "tag", "score"))
        for row, first, last, tag, score in zip(*columns):
            start, end = starts[row][first], ends[row][last]
            rows[row].append(
                {"text": texts[row][start:end], "start": start, "end": end, "tag": names[tag], "score": float(score)}
            )
        return rows

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
        lengths = self.tokenizer.tokenize(tf.constant(texts)).row_lengths()
        owner, _, _ = text_windows.single_text_table(lengths, self.sequence_length, self.window_stride)
        counts = text_windows.windows_per_row(owner, len(texts)).numpy()
        return reading_report(lengths.numpy(), counts, [0] * len(texts), single)


def _entities(texts, entities, words):
    """Per text, its entities `[{"type", "text", "start", "end", "score"}]`; `words` are all texts' words in order."""
    rows = [[] for _ in texts]
    columns = (entities[k] for k in ("row", "first_word", "last_word", "type", "score"))
    for row, first, last, kind, score in zip(*columns):
        start, end = words[first]["start"], words[last]["end"]
        rows[row].append(
            {"type": kind.decode("utf-8"), "text": texts[row][start:end], "start": start, "end": end,
             "score": float(score)}
        )
    return rows


def _numpy(tensors):
    return {k: v.numpy() for k, v in tensors.items()}
