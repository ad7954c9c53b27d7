"""`TextEmbedderPipeline`: raw texts in, sentence embeddings (numpy) out.

    pipeline = keras_bert.TextEmbedderPipeline.from_pretrained("path/to/all-MiniLM-L6-v2")
    vectors = pipeline(["A man is eating food.", "Someone is eating a meal."])  # (2, 384) float32
    vectors @ vectors.T  # cosine similarities (the checkpoint normalises)
"""

import numpy as np
import tensorflow as tf

from keras_bert.converters.sentence_transformers_folder import read_sentence_embedding_config
from keras_bert.models.bert_text_embedder import BertTextEmbedder
from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, reading_report, text_batch
from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

_INPUTS = ("token_ids", "segment_ids", "padding_mask")


class TextEmbedderPipeline(TaskPipeline):
    """One embedding per text, as sentence-transformers' `encode` computes it.

    Each text is tokenized, cut to `sequence_length` tokens ([CLS] and [SEP]
    included; an embedding is one sequence's, so long texts are truncated, as
    in sentence-transformers, not windowed) and embedded. Texts are run in
    batches of similar length, each cut to its longest text (dynamic padding:
    a sentence of 20 tokens costs a 24-token forward pass, not a 256-token one).

    Args:
        model: a `BertTextEmbedder`, or the `RuntimeModel` of one's ONNX /
            LiteRT export (`keras_bert.export.export_onnx`): the same
            tokenization and batching around onnxruntime's graph.
        tokenizer: the `BertTokenizer` of its checkpoint.
        sequence_length: tokens per text at most; default the model's
            `sequence_length` (the checkpoint's `max_seq_length`), else the
            backbone's `max_sequence_length`.
        batch_size: texts per forward pass.
        lowercase: lowercase texts (Python's `str.lower`) before tokenizing,
            as sentence-transformers does for `do_lower_case` checkpoints.

    Call arguments:
        texts: a string or a list of strings.

    Returns:
        float32 numpy array `(num_texts, hidden_dim)`, or `(hidden_dim,)` for a single string.
    """

    def __init__(self, model, tokenizer, sequence_length=None, batch_size=32, lowercase=False):
        # An export's RuntimeModel is told by its metadata (not imported here: pipelines do not need onnxruntime).
        exported = getattr(model, "metadata", None)
        if isinstance(model, BertTextEmbedder):
            self._width = model.backbone.hidden_dim
            default_length = model.sequence_length or model.backbone.max_sequence_length
        elif isinstance(exported, dict) and exported.get("task") == "text_embedder":
            self._width = exported["backbone_config"]["hidden_dim"]
            default_length = exported["sequence_length"]
        else:
            raise ValueError(
                "TextEmbedderPipeline needs a BertTextEmbedder or the RuntimeModel of its export. "
                f"Received: {type(model).__name__}"
            )
        if sequence_length is None:
            sequence_length = default_length
        if not isinstance(sequence_length, int) or sequence_length < 3:
            raise ValueError(f"`sequence_length` must be an int >= 3. Received: sequence_length={sequence_length!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"`batch_size` must be a positive int. Received: batch_size={batch_size!r}")
        super().__init__(model, tokenizer, sequence_length, batch_size)
        self.lowercase = bool(lowercase)

    @classmethod
    def from_pretrained(cls, path, backbone_kwargs=None, **kwargs):
        """The pipeline of a sentence-transformers folder (or a plain BERT checkpoint, mean-pooled).

        Args:
            path: what `BertTextEmbedder.from_pretrained` reads.
            backbone_kwargs: backbone arguments that keep the weights' shapes (`dtype`, ...).
            **kwargs: pipeline arguments (`batch_size`, `sequence_length`, ...)
                and embedder arguments (`pooling`, `normalize`).
        """
        settings = read_sentence_embedding_config(path)
        model_options = {k: kwargs.pop(k) for k in ("pooling", "normalize", "scale") if k in kwargs}
        model = BertTextEmbedder.from_pretrained(path, backbone_kwargs=backbone_kwargs, **model_options)
        tokenizer = BertTokenizer.from_pretrained(settings["transformer_path"])
        kwargs.setdefault("lowercase", bool(settings["do_lower_case"]))
        return cls(model, tokenizer, **kwargs)

    def __call__(self, texts):
        texts, single = text_batch(texts)
        check_texts(texts)
        if not texts:
            return np.zeros((0, self._width), "float32")
        embeddings = np.asarray(self._predict_trimmed(self.inputs(texts)), "float32")
        return embeddings[0] if single else embeddings

    def input_stats(self, texts):
        """How each text is read: `{"tokens", "windows": 1, "truncated_tokens"}` (a dict for a single string)."""
        texts, single = text_batch(texts)
        texts = [text.lower() for text in texts] if self.lowercase else texts
        lengths = [len(ids) for ids in self.tokenizer.tokenize(tf.constant(texts)).to_list()] if texts else []
        budget = self.sequence_length - 2  # [CLS] and [SEP]
        return reading_report(lengths, [1] * len(lengths), [max(n - budget, 0) for n in lengths], single)

    def inputs(self, texts):
        """Packed int32 inputs `(num_texts, sequence_length)` of a list of texts (truncated, right-padded)."""
        if self.lowercase:
            texts = [text.lower() for text in texts]
        ids = self.tokenizer.tokenize(tf.constant(texts))[:, : self.sequence_length - 2].to_list()
        x = {name: np.zeros((len(texts), self.sequence_length), "int32") for name in _INPUTS}
        x["token_ids"][:] = self.tokenizer.pad_token_id
        for row, tokens in enumerate(ids):
            n = len(tokens) + 2
            x["token_ids"][row, :n] = [self.tokenizer.cls_token_id, *tokens, self.tokenizer.sep_token_id]
            x["padding_mask"][row, :n] = 1
        return x

    def training_inputs(self, anchors, positives, *negatives):
        """Contrastive training inputs: `(num_tuples, k, sequence_length)` arrays for `BertTextEmbedder.fit`.

        Args:
            anchors: list of texts.
            positives: list of texts, one per anchor (e.g. a paraphrase, an answer).
            *negatives: optional lists of hard negatives, one text per anchor each.

        Returns:
            A dict of int32 arrays; `[:, 0]` holds the anchors, `[:, 1]` the
            positives, `[:, 2:]` the negatives, each cut to the longest text.
        """
        columns = [text_batch(column, "texts")[0] for column in (anchors, positives, *negatives)]
        if len({len(column) for column in columns}) != 1:
            raise ValueError(f"Every column needs one text per anchor. Received lengths {[len(c) for c in columns]}")
        for column in columns:
            check_texts(column)
        packed = [self.inputs(column) for column in columns]
        width = max(int(p["padding_mask"].sum(axis=1).max()) for p in packed)
        return {name: np.stack([p[name][:, :width] for p in packed], axis=1) for name in _INPUTS}
