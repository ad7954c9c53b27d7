"""BertTask: the base of the task models (every BERT model with a head)."""

import contextlib
import inspect
from collections.abc import Mapping

import keras

from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.layers.arguments import check_rate, get_initializer
from keras_bert.layers.transformer_encoder import TransformerEncoder, first_token_only
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.input_checks import BACKBONE_INPUTS, check_fit_data, check_inputs, check_labels
from keras_bert.models.pretrained import build_from_checkpoint, task_head_arguments
from keras_bert.models.quantization import quantized_layers, restore_quantization, warn_if_int8_is_slow
from keras_bert.optimizers import build_before_first_trace, create_optimizer
from keras_bert.torch_training.compiled_inference_steps import CompiledInferenceSteps
from keras_bert.torch_training.compiled_train_step import CompiledTrainStep


def check_num_classes(num_classes, where):
    """Raises ValueError unless `num_classes` is a positive int."""
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
        raise ValueError(f"{where}: `num_classes` must be a positive int. Received: num_classes={num_classes!r}")


def check_label_names(label_names, num_classes, where):
    """`label_names` as a list of distinct strings matching `num_classes` (None: any number), or None."""
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


def check_label_head(cls, kwargs, num_classes, dropout, label_names, regression=False):
    """Checks the arguments of a head that labels (texts or tokens); returns `label_names` as a list (or None).

    Args:
        cls: the model class; with `kwargs["name"]`, what messages call the model.
        kwargs: the model's other keyword arguments.
        num_classes, dropout, label_names: the head's arguments.
        regression: `num_classes=1` is a regressor, which has no label names to count.
    """
    where = kwargs.get("name") or cls.__name__
    check_num_classes(num_classes, where)
    check_rate("dropout", dropout)
    counted = None if regression and num_classes == 1 else num_classes
    return check_label_names(label_names, counted, where)


def output_layers(backbone, units, dropout, kernel_initializer):
    """BERT's task output: `(Dropout(dropout), Dense(units))`, the logits in float32 even under mixed precision.

    The names, "output_dropout" and "logits", are what converters and `.keras` files address.
    """
    output_dropout = keras.layers.Dropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
    output_dense = keras.layers.Dense(
        units, kernel_initializer=get_initializer(kernel_initializer), dtype="float32", name="logits"
    )
    return output_dropout, output_dense


class BertTask(CompiledInferenceSteps, keras.Model):
    """Base class of the task models (pretrainer, classifiers, ...).

    A task model is a functional model whose body is a `BertBackbone`. This
    class gives them all:

    - `from_pretrained`: the model on a pretrained backbone;
    - the backbone's input checks (a wrong input name, rank, dtype or
      out-of-range id fails with a clear message) on every call, `fit`,
      `predict` and `evaluate`, and label checks on `fit` and `evaluate`;
    - `compile` with the task's defaults (`default_optimizer`,
      `compile_defaults`) for every argument left "auto";
    - config serialisation that stores the backbone's config, so `.keras`
      files rebuild the same architecture on any backend.

    Subclasses build their graph in `__init__` and set the class attributes
    below; `compile_defaults` gives their loss and metrics.
    """

    # The names of the model's inputs.
    input_names = BACKBONE_INPUTS
    # Inputs have a choices axis: `(batch_size, num_choices, length)`, and
    # labels index the choices (multiple choice).
    has_choices_axis = False
    # A label id that marks positions to leave out of the loss (token classifiers: -100).
    ignored_label = None
    # Whether checkpoints hold this model's heads (the pretraining heads):
    # `from_pretrained` then loads them too, else they start random.
    heads_in_checkpoints = False
    # Constructor arguments other than `backbone`, stored as attributes of the same name, for `get_config`.
    config_arguments = ()
    # The backbone class `from_pretrained` builds (its family's checkpoints).
    backbone_class = BertBackbone

    @classmethod
    def from_pretrained(cls, path, *args, backbone_kwargs=None, **kwargs):
        """The model on a pretrained backbone; the format is detected.

        Args:
            path: any checkpoint `BertBackbone.from_pretrained` reads (Hugging
                Face folder, Google TF1 checkpoint, `.keras` file, `hf://owner/name`,
                a preset name such as "bert_base_en_uncased").
            *args: the constructor's other positional arguments (e.g. `num_classes`).
            backbone_kwargs: dict of backbone arguments that keep the weights'
                shapes (`dropout`, `dtype`, ...), and `cache_dir` for hub names.
            **kwargs: the other constructor arguments (`num_classes`,
                `label_names`, ...). For models whose heads checkpoints hold
                (`BertPretrainer`, `BertMaskedLM`), backbone arguments instead,
                as in `backbone_kwargs`.

        Returns:
            A model of this class. Its head starts random, except for the
            pretraining heads, which are loaded too (a checkpoint without them
            raises ValueError naming the missing tensors), and a Hugging Face
            task checkpoint's head: a `BertForSequenceClassification` folder
            gives a `BertClassifier` with its head, its number of labels and
            its `id2label` as `label_names` (`num_labels=1`: the regressor);
            likewise `BertForTokenClassification` -> `BertTokenClassifier`,
            `BertForQuestionAnswering` -> `BertQuestionAnswerer`,
            `BertForMultipleChoice` -> `BertMultipleChoice`. Another task's
            head raises ValueError saying what the checkpoint is.

        Examples:
        ```python
        classifier = keras_bert.BertClassifier.from_pretrained("path/to/hf_bert_dir", num_classes=2)
        classifier = keras_bert.BertClassifier.from_pretrained("hf_sequence_classification_dir")
        pretrainer = keras_bert.BertPretrainer.from_pretrained("uncased_L-12_H-768_A-12/", dropout=0.0)
        ```
        """
        backbone_kwargs = dict(backbone_kwargs or {})
        if cls.heads_in_checkpoints:
            if args:
                raise TypeError(f"{cls.__name__}.from_pretrained takes only `path` positionally. Received: {args!r}")
            backbone_kwargs.update(kwargs)
            cache_dir = backbone_kwargs.pop("cache_dir", None)
            return build_from_checkpoint(read_checkpoint(path, cache_dir), cls, cls.backbone_class, **backbone_kwargs)
        # Positional constructor arguments by name (`backbone` is the first), to merge with the checkpoint's.
        parameters = list(inspect.signature(cls.__init__).parameters.values())[2:]
        names = [p.name for p in parameters if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
        if len(args) > len(names) or set(names[: len(args)]) & set(kwargs):
            raise TypeError(f"{cls.__name__}.from_pretrained: too many or repeated arguments. Received: {args!r}")
        kwargs = {**dict(zip(names, args)), **kwargs}
        checkpoint = read_checkpoint(path, backbone_kwargs.pop("cache_dir", None))
        head_kwargs, has_head = task_head_arguments(checkpoint, cls, kwargs)
        if has_head:
            return build_from_checkpoint(checkpoint, cls, cls.backbone_class, head_kwargs=head_kwargs, **backbone_kwargs)
        return cls(build_from_checkpoint(checkpoint, cls.backbone_class, **backbone_kwargs), **kwargs)


    # --- features the backbone does not take: dropped here, the one place for every caller.
    @property
    def unused_features(self):
        """Standard BERT features this model's backbone does not take (DistilBERT: `segment_ids`).

        Preprocessors, pipelines and exports produce all three BERT inputs
        whatever the backbone; `__call__`, `fit`, `predict`, `evaluate` and
        the `*_on_batch` methods drop these from a dict of arrays or from a `tf.data.Dataset`'s
        feature dicts, so no caller has to know the backbone's family.
        """
        return tuple(n for n in BACKBONE_INPUTS if n not in self.backbone.input_names)

    def _model_input_names(self):
        return tuple(n for n in self.input_names if n not in self.unused_features)

    def drop_unused_features(self, x):
        """`x` (a dict, or a dataset of dicts / (dict, ...) tuples) without `unused_features`."""
        unused = self.unused_features
        if not unused:
            return x
        if isinstance(x, Mapping):
            return {k: v for k, v in x.items() if k not in unused}
        if hasattr(x, "element_spec") and hasattr(x, "map"):  # a tf.data.Dataset (no TensorFlow import here)

            def drop(features, *rest):
                if isinstance(features, Mapping):
                    features = {k: v for k, v in features.items() if k not in unused}
                return (features, *rest) if rest else features

            return x.map(drop)
        return x

    @classmethod
    def from_preset(cls, preset, *args, **kwargs):
        """`from_pretrained` under keras-hub's name, e.g. `BertClassifier.from_preset("bert_tiny_en_uncased", num_classes=2)`."""
        return cls.from_pretrained(preset, *args, **kwargs)

    # --- input and label checks: bad data fail here with a clear message, not deep in a kernel.
    def __call__(self, inputs, *args, **kwargs):
        return super().__call__(self._checked_inputs(inputs), *args, **kwargs)

    def _checked_inputs(self, inputs):
        """`inputs` without the features the backbone does not take, checked as a call checks them."""
        inputs = self.drop_unused_features(inputs)
        check_inputs(
            inputs,
            self.backbone.input_limits,
            names=self._model_input_names(),
            where=self.name,
            choices=self.has_choices_axis,
        )
        return inputs

    def fit(self, x=None, *args, **kwargs):
        x = self.drop_unused_features(x)
        if "validation_data" in kwargs and isinstance(kwargs["validation_data"], tuple):
            features, *rest = kwargs["validation_data"]
            kwargs["validation_data"] = (self.drop_unused_features(features), *rest)
        elif "validation_data" in kwargs:
            kwargs["validation_data"] = self.drop_unused_features(kwargs["validation_data"])
        self._check_data(x, args[0] if args else kwargs.get("y"))
        build_before_first_trace(self)
        return super().fit(x, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        x = self.drop_unused_features(x)
        self._check_data(x)
        return super().predict(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        x = self.drop_unused_features(x)
        self._check_data(x, args[0] if args else kwargs.get("y"))
        return super().evaluate(x, *args, **kwargs)

    # The batch methods drop them too: on JAX a DistilBERT classifier's predict_on_batch given `segment_ids` read
    # the wrong arrays as its inputs (logits 0.15 off on a tiny model, no error); TensorFlow and torch matched by name.
    def predict_on_batch(self, x):
        return super().predict_on_batch(self.drop_unused_features(x))

    def train_on_batch(self, x, *args, **kwargs):
        return super().train_on_batch(self.drop_unused_features(x), *args, **kwargs)

    def test_on_batch(self, x, *args, **kwargs):
        return super().test_on_batch(self.drop_unused_features(x), *args, **kwargs)

    def predict_step(self, *args, **kwargs):
        with self.inference_scope():
            return super().predict_step(*args, **kwargs)  # compiled on torch with jit_compile=True (the mixin's)

    def call_with_token_embeddings(self, inputs, token_embeddings):
        """The model's outputs with `token_embeddings` in place of the token table's rows (inference).

        The task's graph as it is, with the backbone run by
        `EncoderBackbone.call_with_token_embeddings`: what gradient-based
        explanations (`keras_bert.explain`) differentiate. With
        `token_embeddings = backbone.token_embedding(token_ids)` the outputs
        are a call's.

        Args:
            inputs: dict of the model's int inputs, `(batch_size, length)`, or
                `(batch_size, num_choices, length)` with a choices axis.
            token_embeddings: float tensor `(rows, length, embedding_dim)`, one
                row per sequence the backbone reads (`batch_size * num_choices`
                with a choices axis, in that order).

        Returns:
            What a call returns (logits, or a dict of them).
        """
        inputs = self.drop_unused_features(inputs)
        backbone = self.backbone

        def on_embeddings(operation):
            if operation is not backbone:
                return operation
            return lambda backbone_inputs, **_: backbone.call_with_token_embeddings(backbone_inputs, token_embeddings)

        # Keras' own graph walk (what `Functional.call` runs), with the backbone's node swapped: the
        # head stays the task's, whatever its layers (no second copy of any head to keep in step).
        flat = [inputs[tensor.name] for tensor in self.inputs]
        outputs = self._run_through_graph(flat, operation_fn=on_embeddings)
        return outputs[0] if isinstance(outputs, (list, tuple)) and len(outputs) == 1 else outputs

    def inference_scope(self):
        """A context for inference-only forward passes: `predict`, `predict_on_batch` and the exports run in it.

        Here it changes nothing; a task that reads only part of the backbone's
        output skips the rest in it (`BertClassifier` with [CLS] pooling and
        `BertMultipleChoice`: the last block at [CLS], see `cls_only_scope`).
        `fit`, `evaluate` and a direct call run without it, except the compiled
        torch train step (`jit_compile=True`), which traces in it: it changes no
        output, so no loss or gradient either.
        """
        return contextlib.nullcontext()

    def _check_data(self, x, y=None):
        check_fit_data(x, self.backbone.input_limits, self._model_input_names(), self.name, choices=self.has_choices_axis)
        num_classes = self._num_label_classes(x)
        if y is not None and num_classes is not None:
            check_labels(y, num_classes, self.name, self.ignored_label)

    def _num_label_classes(self, x):
        """How many classes the labels of `x` may take, or None when that is not known."""
        if not self.has_choices_axis:
            return getattr(self, "num_classes", None)
        token_ids = x.get("token_ids") if isinstance(x, Mapping) else None
        shape = getattr(token_ids, "shape", None)
        # (batch_size, num_choices, length): a label is the index of a choice.
        return shape[1] if shape is not None and len(shape) == 3 and shape[1] is not None else None

    # --- compiling
    def default_optimizer(self):
        """The optimizer "auto" means: BERT's AdamW at a fine-tuning learning rate (3e-5)."""
        return create_optimizer(learning_rate=3e-5)

    def compile_defaults(self):
        """What `compile` uses for `loss`, `metrics` and `weighted_metrics` left "auto".

        Returns:
            A dict with any of `loss`, `metrics`, `weighted_metrics` (a missing
            one means None) and `loss_weights` (used with the default loss).
            Subclasses give their task's.
        """
        return {}

    def compile(self, optimizer="auto", loss="auto", metrics="auto", weighted_metrics="auto", **kwargs):
        """Compiles with the task's defaults for every argument left "auto".

        Args:
            optimizer: "auto" is `default_optimizer()` (AdamW, weight decay
                0.01 except on LayerNorm and biases, global norm clipping at
                1.0); or any Keras optimizer, e.g. `create_optimizer(learning_rate=...,
                warmup_steps=..., total_steps=...)` for warmup and linear decay.
            loss: "auto" is the task's loss (see the class's `compile_defaults`).
            metrics: "auto" is the task's metrics.
            weighted_metrics: "auto" is the task's metrics weighted by the sample weights.
            **kwargs: the other arguments of `keras.Model.compile`. On the torch
                backend, `jit_compile=True` trains with `CompiledTrainStep`
                (`keras_bert.torch_training`: the forward and loss traced once and
                compiled, float32 linear layers through oneDNN on a CPU, the AdamW
                update fused), not Keras' `torch.compile` of its step; `evaluate`
                and `predict` run the forward as one compiled graph
                (`CompiledInferenceSteps`).
        """
        if _is_auto(optimizer):
            optimizer = self.default_optimizer()
        arguments = {"loss": loss, "metrics": metrics, "weighted_metrics": weighted_metrics}
        if any(_is_auto(value) for value in arguments.values()):
            defaults = self.compile_defaults()
            if _is_auto(loss) and "loss_weights" in defaults:
                kwargs.setdefault("loss_weights", defaults["loss_weights"])
            arguments = {name: defaults.get(name) if _is_auto(value) else value for name, value in arguments.items()}
        super().compile(optimizer=optimizer, **arguments, **kwargs)

    # --- the compiled torch train step (`jit_compile=True` on torch)
    def make_train_function(self, force=False):
        if keras.backend.backend() != "torch" or not self.jit_compile or self.steps_per_execution > 1:
            return super().make_train_function(force)  # (Keras' torch trainer refuses steps_per_execution > 1)
        if self.train_function is None or force:
            # Traced in `inference_scope`: it changes no output, so no loss or gradient, and a classifier's
            # last block then runs its feed-forward network at [CLS] only, as nothing else reaches the loss.
            self.train_function = CompiledTrainStep(
                self, check_batch=self._check_data, forward_scope=self.inference_scope
            )
        return self.train_function


    def compile_from_config(self, config):
        # Our `compile` fills defaults; a saved compile config already holds the
        # resolved optimizer, losses and metrics, so compile with it directly.
        # (Keras skips restoring the compile state of models with a custom
        # `compile` unless this is overridden, losing the optimizer state.)
        config = keras.saving.deserialize_keras_object(config)
        # The saved `jit_compile` is what "auto" resolved to on the saving backend (False for
        # TensorFlow on CPU, for torch): resolve it again here, or a model fine-tuned on
        # TensorFlow would predict eagerly, op by op, on JAX.
        config["jit_compile"] = "auto"
        keras.Model.compile(self, **config)
        if self.built:
            self.optimizer.build(self.trainable_variables)

    # --- saving
    def _task_config(self):
        """The constructor arguments in `config_arguments`, serialised."""
        config = {}
        for name in self.config_arguments:
            value = getattr(self, name)
            if isinstance(value, keras.initializers.Initializer):
                value = keras.initializers.serialize(value)
            config[name] = value
        return config

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Keras' `Model.quantize`, then a warning (once) where int8 was measured slower than float32 on CPU."""
        super().quantize(mode, config=config, filters=filters, **kwargs)
        warn_if_int8_is_slow(mode, config)

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.layers.serialize(self.backbone),
            **self._task_config(),
            # The head's quantized layers; the backbone's are in its own config.
            **({"quantized_layers": quantized} if (quantized := quantized_layers(self, exclude=self.backbone)) else {}),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.layers.deserialize(config["backbone"])
        quantized = config.pop("quantized_layers", None)
        model = cls(**config)
        return restore_quantization(model, quantized) if quantized else model


def _is_auto(value):
    return isinstance(value, str) and value == "auto"


def cls_only_scope(backbone):
    """`first_token_only` on `backbone`'s last block, for a head that reads only its `pooled_output`; else a no-op.

    Every backbone of the family takes `pooled_output` from the first position
    of the last block's output (BERT's and RoBERTa's pooler, DistilBERT's and
    ELECTRA's [CLS] vector). Not cut: a backbone that shares its blocks
    (ALBERT: the one block would be cut at every pass), takes packed inputs
    (one [CLS] per packed example) or outputs attention scores.
    """
    blocks = backbone.encoder_blocks
    if (
        not blocks
        or not isinstance(blocks[-1], TransformerEncoder)
        or sum(block is blocks[-1] for block in blocks) != 1
        or getattr(backbone, "packed_inputs", False)
        or getattr(backbone, "output_attentions", False)
    ):
        return contextlib.nullcontext()
    return first_token_only(blocks[-1])


def inference_scope_of(model):
    """`model.inference_scope()` for a task model; a no-op for a backbone (it returns everything it computes)."""
    return getattr(model, "inference_scope", contextlib.nullcontext)()
