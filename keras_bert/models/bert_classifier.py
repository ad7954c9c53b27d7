"""BertClassifier: sentence (pair) classification or regression on the pooled [CLS] vector."""

import keras

from keras_bert.layers._utils import check_rate, get_initializer
from keras_bert.models.bert_task import BertTask
from keras_bert.optimizers import create_optimizer


def check_label_names(label_names, num_classes, where):
    """`label_names` as a list of distinct strings matching `num_classes`, or None."""
    if label_names is None:
        return None
    if isinstance(label_names, str) or not all(isinstance(n, str) for n in label_names):
        raise ValueError(f"{where}: `label_names` must be a list of strings. Received: label_names={label_names!r}")
    label_names = list(label_names)
    if len(set(label_names)) != len(label_names):
        raise ValueError(f"{where}: `label_names` must be distinct. Received: label_names={label_names!r}")
    if num_classes is not None and len(label_names) != num_classes:
        raise ValueError(
            f"{where}: `label_names` has {len(label_names)} names but num_classes={num_classes}. "
            f"Received: label_names={label_names!r}"
        )
    return label_names


def check_num_classes(num_classes, where):
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
        raise ValueError(f"{where}: `num_classes` must be a positive int. Received: num_classes={num_classes!r}")


def pretrained_backbone(path, backbone_kwargs=None):
    """`BertBackbone.from_pretrained(path, **backbone_kwargs)` (what the task models' `from_pretrained` share)."""
    from keras_bert.models.bert_backbone import BertBackbone

    return BertBackbone.from_pretrained(path, **(backbone_kwargs or {}))


def fine_tuning_optimizer(learning_rate=3e-5, warmup_steps=0, total_steps=None, **kwargs):
    """The optimizer "auto" means for fine-tuning: BERT's AdamW at a fine-tuning learning rate."""
    return create_optimizer(learning_rate=learning_rate, warmup_steps=warmup_steps, total_steps=total_steps, **kwargs)


@keras.saving.register_keras_serializable(package="keras_bert")
class BertClassifier(BertTask):
    """A `BertBackbone` with a classification (or regression) head on the pooled [CLS] output.

    The head is BERT's: dropout, then one dense layer from `pooled_output` to
    `num_classes` logits. With `num_classes=1` the model is a regressor: its
    output is one real value per example (STS-B style), trained with MSE.
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

    Examples:
    ```python
    backbone = keras_bert.BertBackbone.from_pretrained("path/to/hf_bert_dir")
    classifier = keras_bert.BertClassifier(backbone, num_classes=2, label_names=["negative", "positive"])
    classifier.compile()  # AdamW lr 3e-5, cross-entropy, accuracy
    classifier.fit(train_dataset, validation_data=dev_dataset, epochs=3)
    ```
    """

    def __init__(
        self,
        backbone,
        num_classes,
        dropout=0.1,
        label_names=None,
        kernel_initializer="truncated_normal",
        **kwargs,
    ):
        where = kwargs.get("name") or type(self).__name__
        check_num_classes(num_classes, where)
        check_rate("dropout", dropout)
        label_names = check_label_names(label_names, num_classes if num_classes > 1 else None, where)

        # === Layers === (locals until the model is initialised, for the torch backend)
        output_dropout = keras.layers.Dropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
        # float32 logits even under mixed precision, for a stable loss.
        output_dense = keras.layers.Dense(
            num_classes, kernel_initializer=get_initializer(kernel_initializer), dtype="float32", name="logits"
        )

        # === Functional graph ===
        inputs = backbone.input
        pooled = backbone(inputs)["pooled_output"]
        outputs = output_dense(output_dropout(pooled))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.backbone = backbone
        self.output_dropout = output_dropout
        self.output_dense = output_dense

        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.label_names = label_names
        self.kernel_initializer = get_initializer(kernel_initializer)

    @property
    def is_regression(self):
        return self.num_classes == 1

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """Compiles with BERT's fine-tuning defaults.

        Args:
            optimizer: "auto" is AdamW at lr 3e-5 (weight decay 0.01 except on
                LayerNorm and biases, global norm clipping at 1.0); pass
                `create_optimizer(learning_rate=..., warmup_steps=..., total_steps=...)`
                for warmup and linear decay (the fine-tuning job does).
            loss: "auto" is sparse categorical cross-entropy on the logits, or
                mean squared error for `num_classes=1`.
            metrics: "auto" is accuracy, or mean absolute error for regression.
        """
        if optimizer == "auto":
            optimizer = fine_tuning_optimizer()
        if loss == "auto":
            loss = (
                keras.losses.MeanSquaredError()
                if self.is_regression
                else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            )
        if metrics == "auto":
            metrics = (
                [keras.metrics.MeanAbsoluteError(name="mae")]
                if self.is_regression
                else [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
            )
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def _task_config(self):
        return {
            "num_classes": self.num_classes,
            "dropout": self.dropout,
            "label_names": self.label_names,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
        }

    @classmethod
    def from_pretrained(cls, path, num_classes, backbone_kwargs=None, **kwargs):
        """A classifier on a pretrained backbone; the head starts random.

        Args:
            path: any checkpoint `BertBackbone.from_pretrained` reads (Hugging
                Face folder, Google TF1 checkpoint, `.keras` file).
            num_classes: int, as in the constructor.
            backbone_kwargs: dict of backbone arguments that keep the weights'
                shapes (`dropout`, `dtype`, ...).
            **kwargs: the other constructor arguments (`dropout`, `label_names`, ...).
        """
        return cls(pretrained_backbone(path, backbone_kwargs), num_classes=num_classes, **kwargs)
