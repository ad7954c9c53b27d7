"""Distiller: trains a small BERT task model on a frozen larger one's soft targets (DistilBERT's recipe)."""

import keras
from keras import ops

from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.input_checks import check_fit_data, check_inputs, check_labels
from keras_bert.models.student_from_teacher import teacher_layer_indices
from keras_bert.optimizers import build_before_first_trace


def distillation_loss(student_logits, teacher_logits, labels=None, temperature=2.0, alpha=0.5, weights=None):
    """DistilBERT's task loss: `alpha * T^2 * KL(teacher_T || student_T) + (1 - alpha) * CE(labels, student)`.

    `teacher_T` and `student_T` are the softmaxes of the logits divided by the
    temperature `T`; the `T^2` keeps the soft term's gradients on the scale of
    the hard one's as `T` changes (Hinton et al., 2015). Computed in float32.

    Args:
        student_logits, teacher_logits: float tensors of shape `(..., num_classes)`
            (`(batch_size, num_classes)` for a classifier, `(batch_size, length,
            num_classes)` for a tagger).
        labels: int tensor of shape `(...)` (the logits' without the last axis),
            or None when `alpha == 1` (soft targets only).
        temperature: float > 0.
        alpha: float in [0, 1], the weight of the soft targets.
        weights: optional float tensor of shape `(...)`: each position's weight
            (0 leaves it out, e.g. a tagger's unlabelled tokens).

    Returns:
        A float32 scalar: the weighted mean of the per-position loss.
    """
    student = ops.cast(student_logits, "float32")
    teacher = ops.cast(teacher_logits, "float32")
    # KL(p || q) = sum p (log p - log q), over the classes: shape (...).
    teacher_log_probs = ops.log_softmax(teacher / temperature, axis=-1)
    student_log_probs = ops.log_softmax(student / temperature, axis=-1)
    kl = ops.sum(ops.exp(teacher_log_probs) * (teacher_log_probs - student_log_probs), axis=-1)
    loss = alpha * temperature**2 * kl
    if alpha < 1:
        hard = ops.take_along_axis(
            ops.log_softmax(student, axis=-1), ops.expand_dims(ops.maximum(ops.cast(labels, "int32"), 0), -1), axis=-1
        )
        loss = loss + (1 - alpha) * -ops.squeeze(hard, -1)
    return _weighted_mean(loss, weights)


def hidden_cosine_loss(student_hidden, teacher_hidden, weights=None):
    """Mean of `1 - cos(student, teacher)` over tokens and layer pairs (DistilBERT's cosine embedding loss).

    Args:
        student_hidden, teacher_hidden: lists of the same length of float
            tensors of shape `(batch_size, length, hidden_dim)`, paired in order.
        weights: optional `(batch_size, length)` weights (the padding mask).

    Returns:
        A float32 scalar.
    """
    losses = []
    for s, t in zip(student_hidden, teacher_hidden):
        s, t = ops.cast(s, "float32"), ops.cast(t, "float32")
        cosine = ops.sum(s * t, axis=-1) / ops.maximum(ops.norm(s, axis=-1) * ops.norm(t, axis=-1), 1e-12)
        losses.append(_weighted_mean(1.0 - cosine, weights))
    return ops.mean(ops.stack(losses))


def check_distillation_arguments(temperature, alpha, hidden_loss_weight):
    """Raises ValueError naming the value unless temperature > 0, alpha in [0, 1] and hidden_loss_weight >= 0."""
    _check_number("temperature", temperature, low=0.0, low_inclusive=False)
    _check_number("alpha", alpha, low=0.0, high=1.0)
    _check_number("hidden_loss_weight", hidden_loss_weight, low=0.0)


def _weighted_mean(values, weights):
    if weights is None:
        return ops.mean(values)
    weights = ops.cast(weights, "float32")
    return ops.sum(values * weights) / ops.maximum(ops.sum(weights), 1e-12)


@keras.saving.register_keras_serializable(package="keras_bert")
class Distiller(keras.Model):
    """A frozen teacher and a trainable student of the same task, trained with DistilBERT's loss.

    `fit` trains the student on `distillation_loss` (soft targets of the
    teacher, computed on the fly in inference mode, plus the labels), and with
    `hidden_loss_weight > 0` also on `hidden_cosine_loss` between the student's
    blocks and the teacher blocks they map to. The teacher's weights do not
    change. The result to keep is `distiller.student`: a plain task model that
    saves, exports and serves like any other.

    Supported tasks: `BertClassifier` (not a regressor) and `BertTokenClassifier`
    (the loss then runs over labelled tokens, or with `alpha=1` over unpadded ones).

    Inputs: the task models' (a dict of `token_ids`, `segment_ids`,
    `padding_mask`, int32 of shape `(batch_size, length)`).

    Outputs (a dict): `logits`, the student's; `teacher_logits`; with the
    hidden loss also `student_hidden` and `teacher_hidden`, lists of the
    mapped blocks' outputs, shape `(batch_size, length, hidden_dim)`.

    Training data are `(x, labels)` as for the student; with `alpha=1` the
    labels may be left out (unlabelled text), and the metrics then measure
    agreement with the teacher's predictions. With
    `precomputed_teacher_logits=True` the teacher does not run in `fit`: the
    data are `(x, {"labels": labels, "teacher_logits": logits})`, the logits
    computed once up front (`teacher.predict`), which saves the teacher's
    forward pass at every step of every epoch.

    Args:
        teacher: a trained task model; frozen here (`trainable=False`).
        student: a task model of the same class and labels, reading the same
            inputs (vocabulary, segments), e.g. `student_from_teacher(teacher, 3)`.
        temperature: float > 0 (DistilBERT: 2).
        alpha: float in [0, 1], weight of the soft targets against the labels.
        hidden_loss_weight: float >= 0, weight of the hidden-state cosine loss
            (needs the same width in both).
        layer_map: optional list, for each student block, of the teacher block
            its output is compared with; default the blocks `student_from_teacher`
            takes (`teacher_layer_indices`).
        precomputed_teacher_logits: bool. The teacher's logits come with the
            labels (see above) instead of from the teacher at every step; not
            with the hidden-state loss (the teacher's hidden states would be needed).

    Examples:
    ```python
    student = keras_bert.student_from_teacher(teacher, num_layers=3)
    distiller = keras_bert.Distiller(teacher, student, temperature=2.0, alpha=0.5)
    distiller.compile()  # AdamW lr 3e-5; the student's accuracy
    distiller.fit(train_dataset, epochs=3)
    distiller.student.save("student.keras")
    ```
    """

    def __init__(
        self, teacher, student, temperature=2.0, alpha=0.5, hidden_loss_weight=0.0, layer_map=None,
        precomputed_teacher_logits=False, **kwargs,
    ):
        _check_pair(teacher, student)
        check_distillation_arguments(temperature, alpha, hidden_loss_weight)
        layer_map = _check_layer_map(teacher, student, layer_map, hidden_loss_weight)
        if precomputed_teacher_logits and hidden_loss_weight > 0:
            raise ValueError(
                "The hidden-state loss needs the teacher's hidden states at every step: it cannot use precomputed "
                f"teacher logits. Received: hidden_loss_weight={hidden_loss_weight!r}, precomputed_teacher_logits=True"
            )
        super().__init__(**kwargs)
        teacher.trainable = False
        self.teacher = teacher
        self.student = student
        self.temperature = float(temperature)
        self.alpha = float(alpha)
        self.hidden_loss_weight = float(hidden_loss_weight)
        self.layer_map = layer_map
        self.precomputed_teacher_logits = bool(precomputed_teacher_logits)
        # Functional views of each model that also output the compared blocks'
        # hidden states, sharing the models' layers (one forward pass each).
        use_hidden = self.hidden_loss_weight > 0
        self.student_features = _features(student, range(student.backbone.num_layers) if use_hidden else ())
        self.teacher_features = _features(teacher, layer_map if use_hidden else ())

    @property
    def is_tagger(self):
        return isinstance(self.student, BertTokenClassifier)

    def __call__(self, inputs, *args, **kwargs):
        check_inputs(inputs, self.student.backbone.input_limits, names=self.student.input_names, where=self.name)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, training=None):
        student = self.student_features(inputs, training=training)
        if self.precomputed_teacher_logits:
            return {"logits": student["logits"]}  # the teacher's come with the labels
        # The teacher always runs in inference mode (no dropout) and gets no gradient.
        teacher = self.teacher_features(inputs, training=False)
        outputs = {"logits": student["logits"], "teacher_logits": ops.stop_gradient(teacher["logits"])}
        if self.hidden_loss_weight > 0:
            outputs["student_hidden"] = student["hidden"]
            outputs["teacher_hidden"] = [ops.stop_gradient(h) for h in teacher["hidden"]]
        return outputs

    # --- training
    def compile(self, optimizer="auto", metrics="auto", weighted_metrics="auto", **kwargs):
        """Compiles with the student's defaults for every argument left "auto".

        The loss is the distillation loss the constructor's `temperature`,
        `alpha` and `hidden_loss_weight` define; `loss` is not an argument.

        Args:
            optimizer: "auto" is the student's default (BERT's AdamW, lr 3e-5),
                or any Keras optimizer (`create_optimizer(...)` for warmup and decay).
            metrics: "auto" is the student's (accuracy), on its logits.
            weighted_metrics: "auto" is the student's, on its logits.
        """
        if "loss" in kwargs:
            raise ValueError(
                "Distiller.compile takes no `loss`: the loss is set by temperature, alpha and hidden_loss_weight. "
                f"Received: loss={kwargs['loss']!r}"
            )
        defaults = self.student.compile_defaults()
        if _is_auto(optimizer):
            optimizer = self.student.default_optimizer()
        metrics = defaults.get("metrics") if _is_auto(metrics) else metrics
        weighted_metrics = defaults.get("weighted_metrics") if _is_auto(weighted_metrics) else weighted_metrics
        super().compile(optimizer=optimizer, metrics=metrics, weighted_metrics=weighted_metrics, **kwargs)

    def _labels_and_teacher_logits(self, y, y_pred):
        """`(labels or None, teacher logits)` of a batch, from the labels (precomputed logits) or the outputs."""
        if not self.precomputed_teacher_logits:
            return y, y_pred["teacher_logits"]
        if not isinstance(y, dict) or "teacher_logits" not in y:
            raise ValueError(
                f"{self.name}: with precomputed_teacher_logits=True the labels must be a dict with 'teacher_logits' "
                f"(and 'labels' unless alpha=1). Received: {type(y).__name__}"
                + (f" with keys {sorted(y)}" if isinstance(y, dict) else "")
            )
        return y.get("labels"), y["teacher_logits"]

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels, teacher_logits = self._labels_and_teacher_logits(y, y_pred)
        if labels is None and self.alpha < 1:
            raise ValueError(
                f"{self.name}: training with alpha={self.alpha} mixes in the labels' cross-entropy: give labels, "
                "or use alpha=1 for soft targets only."
            )
        weights = self._position_weights(x, labels, sample_weight)
        loss = distillation_loss(
            y_pred["logits"], teacher_logits, labels, self.temperature, self.alpha, weights=weights
        )
        if self.hidden_loss_weight > 0:
            # Every unpadded token, labelled or not: the hidden states are the whole sequence's.
            tokens = x["padding_mask"]
            loss = loss + self.hidden_loss_weight * hidden_cosine_loss(
                y_pred["student_hidden"], y_pred["teacher_hidden"], tokens
            )
        return loss

    def _position_weights(self, x, y, sample_weight):
        """The weight of each loss position: a tagger's labelled (or unpadded) tokens, times sample weights."""
        weights = None
        if self.is_tagger:
            mask = x["padding_mask"] if y is None else ops.not_equal(y, self.student.ignored_label)
            weights = ops.cast(mask, "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            if self.is_tagger and len(sample_weight.shape) == 1:
                sample_weight = ops.expand_dims(sample_weight, -1)  # one weight per sentence
            weights = sample_weight if weights is None else weights * sample_weight
        return weights

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        # The metrics are the student's, on its logits. Without labels (alpha=1)
        # they compare with the teacher's predictions: agreement with the teacher.
        y, teacher_logits = self._labels_and_teacher_logits(y, y_pred)
        if y is None:
            y = ops.argmax(teacher_logits, axis=-1)
            if self.is_tagger and sample_weight is None:
                sample_weight = x["padding_mask"]  # padding has no prediction to agree with
        return super().compute_metrics(x, y, y_pred["logits"], sample_weight)

    def compile_from_config(self, config):
        # As BertTask's: a saved compile config holds the resolved optimizer and
        # metrics (Keras skips restoring the compile state of a model with a
        # custom `compile` unless this is overridden, losing the optimizer state).
        config = keras.saving.deserialize_keras_object(config)
        config["jit_compile"] = "auto"
        config.pop("loss", None)
        keras.Model.compile(self, **config)
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def fit(self, x=None, y=None, *args, **kwargs):
        self._check_data(x, y)
        build_before_first_trace(self)
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        self._check_data(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def _check_data(self, x, y):
        student = self.student
        check_fit_data(x, student.backbone.input_limits, student.input_names, self.name)
        labels = y.get("labels") if isinstance(y, dict) else y
        if labels is not None:
            check_labels(labels, student.num_classes, self.name, student.ignored_label)

    # --- saving
    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "teacher": keras.layers.serialize(self.teacher),
            "student": keras.layers.serialize(self.student),
            "temperature": self.temperature,
            "alpha": self.alpha,
            "hidden_loss_weight": self.hidden_loss_weight,
            "layer_map": list(self.layer_map),
            "precomputed_teacher_logits": self.precomputed_teacher_logits,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["teacher"] = keras.layers.deserialize(config["teacher"])
        config["student"] = keras.layers.deserialize(config["student"])
        return cls(**config)


def _is_auto(value):
    return isinstance(value, str) and value == "auto"


def _check_number(name, value, low=None, high=None, low_inclusive=True):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    if ok and low is not None:
        ok = value >= low if low_inclusive else value > low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        bounds = f"{'[' if low_inclusive else '('}{low}, {high if high is not None else 'inf'}{']' if high else ')'}"
        raise ValueError(f"`{name}` must be a number in {bounds}. Received: {name}={value!r}")


def _check_pair(teacher, student):
    """Raises ValueError unless teacher and student are classifiers/taggers of the same labels and inputs."""
    for role, model in (("teacher", teacher), ("student", student)):
        if not isinstance(model, (BertClassifier, BertTokenClassifier)):
            raise ValueError(
                f"Distiller: the {role} must be a BertClassifier or BertTokenClassifier. Received: {type(model).__name__}"
            )
    if type(teacher) is not type(student):
        raise ValueError(
            f"Distiller: teacher and student must be the same task. Received: a {type(teacher).__name__} teacher "
            f"and a {type(student).__name__} student"
        )
    if teacher.num_classes != student.num_classes or teacher.num_classes < 2:
        raise ValueError(
            "Distiller: teacher and student must have the same number of classes, at least 2 (soft targets need a "
            f"distribution). Received: teacher num_classes={teacher.num_classes}, student num_classes="
            f"{student.num_classes}"
        )
    if teacher.label_names is not None and student.label_names is not None and teacher.label_names != student.label_names:
        raise ValueError(
            f"Distiller: teacher and student must have the same labels in the same order. Received: teacher "
            f"{teacher.label_names}, student {student.label_names}"
        )
    different = {k: (v, student.backbone.input_limits[k]) for k, v in teacher.backbone.input_limits.items()
                 if k != "max_sequence_length" and student.backbone.input_limits[k] != v}
    if different:
        shown = ", ".join(f"{k}: teacher {a}, student {b}" for k, (a, b) in different.items())
        raise ValueError(f"Distiller: teacher and student must read the same inputs. Received: {shown}")


def _check_layer_map(teacher, student, layer_map, hidden_loss_weight):
    """The teacher block each student block is compared with (checked), default `teacher_layer_indices`."""
    teacher_layers, student_layers = teacher.backbone.num_layers, student.backbone.num_layers
    if hidden_loss_weight > 0 and teacher.backbone.hidden_dim != student.backbone.hidden_dim:
        raise ValueError(
            "The hidden-state loss compares teacher and student states directly and needs the same width. "
            f"Received: teacher hidden_dim={teacher.backbone.hidden_dim}, student hidden_dim={student.backbone.hidden_dim}"
        )
    if layer_map is None:
        if student_layers > teacher_layers:
            if hidden_loss_weight > 0:
                raise ValueError(
                    f"The hidden-state loss pairs each student block with a teacher block: a student with "
                    f"num_layers={student_layers} is deeper than the teacher's num_layers={teacher_layers}; "
                    "give `layer_map`."
                )
            return []  # soft targets only: no pairing is needed
        return teacher_layer_indices(teacher_layers, student_layers)
    layer_map = list(layer_map)
    if len(layer_map) != student_layers or any(
        not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < teacher_layers for i in layer_map
    ):
        raise ValueError(
            f"`layer_map` must give, for each of the student's {student_layers} blocks, a teacher block in "
            f"[0, {teacher_layers}). Received: layer_map={layer_map!r}"
        )
    return layer_map


def _features(task, blocks):
    """A functional model on `task`'s layers: inputs -> {"logits", "hidden": outputs of `blocks`}."""
    backbone = task.backbone
    hidden = [backbone.transformer_layers[i].output for i in blocks]
    last = backbone.transformer_layers[-1] if backbone.final_layer_norm is None else backbone.final_layer_norm
    if isinstance(task, BertClassifier) and task.pooling == "mean":
        on = task.token_pooling(last.output, backbone.input["padding_mask"])  # (batch, hidden_dim)
    elif isinstance(task, BertClassifier):
        on = backbone.pooler.output  # (batch, hidden_dim)
    else:
        on = last.output  # (batch, length, hidden_dim)
    logits = task.output_dense(task.output_dropout(on))
    return keras.Model(backbone.input, {"logits": logits, "hidden": hidden}, name=f"{task.name}_features")
