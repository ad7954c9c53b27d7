"""BertClassifier: sentence (pair) classification or regression on the pooled [CLS] vector (or the tokens' mean)."""

import contextlib

import keras

from keras_bert.layers.sentence_pooling import SentencePooling
from keras_bert.models.bert_task import cls_only_scope
from keras_bert.models.label_head_task import LabelHeadTask
from keras_bert.option_values import POOLING_MODES


@keras.saving.register_keras_serializable(package="keras_bert")
class BertClassifier(LabelHeadTask):
    """A `BertBackbone` with a classification (or regression) head on the pooled [CLS] output.

    The head is BERT's: dropout, then one dense layer from `pooled_output` to
    `num_classes` logits. With `num_classes=1` the model is a regressor: its
    output is one real value per example (STS-B style), trained with MSE.
    With `pooling="mean"` the head reads the mean of the token vectors (padding
    left out) instead of the pooler's [CLS] vector: the pooler is trained only
    by NSP/SOP, so a backbone pretrained without a sentence task (RoBERTa's MLM
    only, ELECTRA) brings a random pooler, while its token vectors are what
    pretraining taught.
    Sentence pairs are the same model fed `[CLS] A [SEP] B [SEP]`.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, sequence_length)` (see `BertClassifierPreprocessor`).

    Outputs: float32 logits of shape `(batch_size, num_classes)` (for
    `num_classes=1`, the predicted values, shape `(batch_size, 1)`).

    Training data are `(x, y)` with int labels of shape `(batch_size,)` in
    `[0, num_classes)` (floats for regression), optionally with sample weights.

    Args:
        backbone: a `keras_bert.BertBackbone`, e.g. `BertBackbone.from_pretrained(path)`.
        num_classes: int. Number of classes; 1 for regression.
        dropout: float. Dropout before the output layer (BERT: 0.1).
        label_names: optional list of `num_classes` strings, saved with the
            model so predictions can be reported by name.
        kernel_initializer: initializer of the output layer (BERT: truncated
            normal, stddev 0.02).
        pooling: "cls" (BERT: the pooler's tanh layer on [CLS]) or "mean" (the
            mean of the sequence output over the real tokens, `SentencePooling`).

    Examples:
    ```python
    backbone = keras_bert.BertBackbone.from_pretrained("path/to/hf_bert_dir")
    classifier = keras_bert.BertClassifier(backbone, num_classes=2, label_names=["negative", "positive"])
    classifier.compile()  # AdamW lr 3e-5, cross-entropy, accuracy
    classifier.fit(train_dataset, validation_data=dev_dataset, epochs=3)

    classifier = keras_bert.BertClassifier.from_pretrained("path/to/hf_bert_dir", num_classes=2)
    ```
    """

    config_arguments = LabelHeadTask.config_arguments + ("pooling",)
    allows_regression = True
    POOLING_MODES = POOLING_MODES  # (keras_bert.option_values: the `keras-bert finetune --pooling` parser reads it there)

    def __init__(
        self, backbone, num_classes, dropout=0.1, label_names=None, kernel_initializer="truncated_normal", pooling="cls",
        **kwargs,
    ):
        if pooling not in self.POOLING_MODES:
            raise ValueError(
                f"{kwargs.get('name') or type(self).__name__}: `pooling` must be one of {self.POOLING_MODES}. "
                f"Received: pooling={pooling!r}"
            )
        token_pooling = None
        if pooling == "mean":
            token_pooling = SentencePooling("mean", dtype=backbone.dtype_policy, name="token_mean_pooling")

        def head_input(backbone_outputs, inputs):  # (batch, hidden)
            if token_pooling is None:
                return backbone_outputs["pooled_output"]
            return token_pooling(backbone_outputs["sequence_output"], inputs["padding_mask"])

        super().__init__(
            backbone, num_classes, dropout, label_names, kernel_initializer, head_input,
            head_layers={"token_pooling": token_pooling}, **kwargs,
        )
        self.pooling = pooling

    @property
    def is_regression(self):
        return self.num_classes == 1

    def inference_scope(self):
        """With `pooling="cls"`, a context in which the forward pass computes the last block at [CLS] only.

        The head then reads only `pooled_output`, the first position of the
        last block, so that block runs its feed-forward network and output
        projection on [CLS] alone (`cls_only_scope`; keys and values still
        from every position): the same logits up to float rounding, without
        three quarters of that block's projection FLOPs (intermediate_dim =
        4 x hidden_dim). `predict`, `predict_on_batch`, `TracedTorchModel` and
        the SavedModel, ONNX and LiteRT exports run in it; `fit`, `evaluate`
        and a direct call do not. A no-op for mean pooling and where
        `cls_only_scope` does not apply (ALBERT, packed inputs, attention outputs).
        """
        return cls_only_scope(self.backbone) if self.pooling == "cls" else contextlib.nullcontext()

    def compile_defaults(self):
        """Sparse categorical cross-entropy on the logits and accuracy; for
        `num_classes=1`, mean squared error and mean absolute error."""
        if self.is_regression:
            return {"loss": keras.losses.MeanSquaredError(), "metrics": [keras.metrics.MeanAbsoluteError(name="mae")]}
        return {
            "loss": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "metrics": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        }
