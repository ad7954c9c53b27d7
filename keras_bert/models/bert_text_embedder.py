"""BertTextEmbedder: one vector per text (sentence embeddings), pooled from a BertBackbone's token vectors."""

import keras
from keras import ops

from keras_bert.converters.sentence_transformers_folder import read_sentence_embedding_config
from keras_bert.layers.sentence_pooling import SentencePooling
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_task import BertTask
from keras_bert.models.input_checks import check_fit_data, check_inputs
from keras_bert.models.multiple_negatives_ranking_loss import MultipleNegativesRankingLoss


def _tuple_axis(inputs):
    """Whether `inputs` carry a tuple axis `(batch_size, k, length)` (contrastive training data)."""
    token_ids = inputs.get("token_ids") if isinstance(inputs, dict) else None
    return token_ids is not None and hasattr(token_ids, "shape") and len(token_ids.shape) == 3


@keras.saving.register_keras_serializable(package="keras_bert")
class BertTextEmbedder(BertTask):
    """A `BertBackbone` whose token vectors are pooled into one embedding per text.

    The model of sentence-transformers (Reimers & Gurevych, 2019): the
    backbone's `sequence_output` pooled over the real tokens (mean by default,
    or [CLS], or max; see `SentencePooling`), optionally L2-normalised so that
    dot products are cosine similarities. `from_pretrained` reads a
    sentence-transformers folder (modules.json, the pooling config,
    Normalize, `max_seq_length`) and gives the same vectors as its `encode`.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, sequence_length)`.

    Outputs: float32 embeddings of shape `(batch_size, hidden_dim)`.

    Contrastive fine-tuning: inputs with a tuple axis, `(batch_size, k,
    sequence_length)` with `k >= 2` — `[:, 0]` the anchors, `[:, 1]` their
    positives, `[:, 2:]` optional hard negatives — give embeddings of shape
    `(batch_size, k, hidden_dim)`, which the default loss
    (`MultipleNegativesRankingLoss`: scaled cosine similarity, cross-entropy
    over the in-batch candidates) trains on. `fit` needs no labels.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        pooling: "mean", "cls", "max" or "mean_sqrt_len_tokens".
        normalize: bool. L2-normalise the embeddings.
        sequence_length: int or None. The length texts are cut to when
            embedding (sentence-transformers' `max_seq_length`: 256 for
            all-MiniLM-L6-v2); None means the backbone's `max_sequence_length`.
            Pipelines and `export_saved_model` use it as their default.
        scale: float. The loss's similarity scale (inverse temperature, 20 as
            in sentence-transformers).

    Examples:
    ```python
    embedder = keras_bert.BertTextEmbedder.from_pretrained("path/to/all-MiniLM-L6-v2")
    pipeline = keras_bert.TextEmbedderPipeline(embedder, keras_bert.BertTokenizer.from_pretrained(path))
    vectors = pipeline(["A man is eating food.", "Someone is eating a meal."])  # (2, 384), unit length

    embedder.compile()  # AdamW lr 3e-5, MultipleNegativesRankingLoss
    embedder.fit(pairs, epochs=1, batch_size=32)  # pairs: inputs of shape (n, 2, length)
    ```
    """

    config_arguments = ("pooling", "normalize", "sequence_length", "scale")

    def __init__(self, backbone, pooling="mean", normalize=False, sequence_length=None, scale=20.0, **kwargs):
        if sequence_length is not None and (
            not isinstance(sequence_length, int) or not 3 <= sequence_length <= backbone.max_sequence_length
        ):
            raise ValueError(
                f"`sequence_length` must be None or an int in [3, {backbone.max_sequence_length}] (the backbone's "
                f"max_sequence_length). Received: sequence_length={sequence_length!r}"
            )
        # Checked here (the loss checks it too) so a bad value fails at construction, not at compile.
        MultipleNegativesRankingLoss(scale)

        # === Layers === (locals until the model is initialised, for the torch backend)
        pooling_layer = SentencePooling(pooling, normalize, dtype=backbone.dtype_policy, name="sentence_pooling")

        # === Functional graph ===
        inputs = backbone.input
        sequence_output = backbone(inputs)["sequence_output"]  # (batch, length, hidden)
        outputs = pooling_layer(sequence_output, inputs["padding_mask"])  # (batch, hidden), float32
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # The graph's inputs are rank 2; `call` also takes rank-3 tuples (see the class
        # docstring), so the rank check of the functional input spec is left out.
        self.input_spec = None
        # The pooler ([CLS] -> tanh dense) is not used: frozen, so the optimizer neither
        # warns that it has no gradients nor decays its weights.
        if getattr(backbone, "pooler", None) is not None:  # DistilBERT and ELECTRA have none
            backbone.pooler.trainable = False
        self.backbone = backbone
        self.sentence_pooling = pooling_layer

        # === Config ===
        self.pooling = pooling
        self.normalize = normalize
        self.sequence_length = sequence_length
        self.scale = float(scale)

    @classmethod
    def from_pretrained(cls, path, backbone_kwargs=None, **kwargs):
        """The embedder of a sentence-transformers folder, or a plain checkpoint with mean pooling.

        Args:
            path: a sentence-transformers folder (modules.json: Transformer,
                Pooling, optional Normalize; e.g. all-MiniLM-L6-v2), or any
                checkpoint `BertBackbone.from_pretrained` reads (Hugging Face
                BERT folder, TF1 checkpoint, `.keras` file). Without
                modules.json the embedder mean-pools and does not normalise.
            backbone_kwargs: dict of backbone arguments that keep the weights'
                shapes (`dropout`, `dtype`, ...).
            **kwargs: constructor arguments overriding the folder's
                (`pooling`, `normalize`, `sequence_length`, `scale`).

        Raises:
            ValueError: a module (e.g. Dense) or pooling mode (e.g.
                "weightedmean") keras_bert does not implement, named.
        """
        settings = read_sentence_embedding_config(path)
        backbone = BertBackbone.from_pretrained(settings["transformer_path"], **dict(backbone_kwargs or {}))
        options = {"pooling": settings["pooling"], "normalize": settings["normalize"]}
        if settings["max_seq_length"] is not None:
            options["sequence_length"] = min(settings["max_seq_length"], backbone.max_sequence_length)
        options.update(kwargs)
        return cls(backbone, **options)

    # --- the tuple axis of contrastive training data: folded into the batch around the graph.
    def __call__(self, inputs, *args, **kwargs):
        check_inputs(
            inputs, self.backbone.input_limits, names=self.input_names, where=self.name, choices=_tuple_axis(inputs)
        )
        return keras.Model.__call__(self, inputs, *args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        if not _tuple_axis(inputs):
            return super().call(inputs, training=training, mask=mask)
        token_ids = inputs["token_ids"]
        flat = {name: ops.reshape(value, (-1, ops.shape(value)[-1])) for name, value in inputs.items()}
        embeddings = super().call(flat, training=training)  # (batch * k, hidden)
        return ops.reshape(embeddings, (-1, ops.shape(token_ids)[1], ops.shape(embeddings)[-1]))

    def compute_output_spec(self, inputs, training=None, mask=None):
        spec = super().compute_output_spec(
            {k: keras.KerasTensor((None, v.shape[-1]), v.dtype) for k, v in inputs.items()} if _tuple_axis(inputs)
            else inputs,
            training=training, mask=mask,
        )
        if _tuple_axis(inputs):
            return keras.KerasTensor(tuple(inputs["token_ids"].shape[:2]) + (spec.shape[-1],), spec.dtype)
        return spec

    def _check_data(self, x, y=None):
        # No label checks: the targets of the contrastive loss are the tuples themselves.
        check_fit_data(x, self.backbone.input_limits, self.input_names, self.name, choices=_tuple_axis(x))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        # Contrastive data come without labels; Keras' compiled loss needs a tensor for them.
        if y is None and y_pred is not None:
            y = ops.zeros(ops.shape(y_pred)[:1], dtype="float32")  # ignored by MultipleNegativesRankingLoss
        return super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)

    def compile_defaults(self):
        """`MultipleNegativesRankingLoss(scale)` on `(anchor, positive[, negatives])` tuples; no metrics."""
        return {"loss": MultipleNegativesRankingLoss(self.scale)}
