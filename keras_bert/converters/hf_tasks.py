"""Hugging Face's BERT task checkpoints and keras_bert's task models, both ways.

| transformers class              | head tensors             | keras_bert model                        |
|---------------------------------|--------------------------|-----------------------------------------|
| BertForSequenceClassification   | `classifier` (labels, H) | BertClassifier (num_labels=1: regressor) |
| BertForTokenClassification      | `classifier` (labels, H) | BertTokenClassifier                     |
| BertForQuestionAnswering        | `qa_outputs` (2, H)      | BertQuestionAnswerer                    |
| BertForMultipleChoice           | `classifier` (1, H)      | BertMultipleChoice                      |
| ModernBertForSequenceClassification | `head`, `classifier` (labels, H) | ModernBertClassifier      |
| ModernBertForTokenClassification | `head`, `classifier` (labels, H) | ModernBertTokenClassifier        |
| ModernBertForQuestionAnswering  | `head`, `classifier` (2, H) | ModernBertQuestionAnswerer           |

ModernBERT's heads also hold its prediction head (`head.dense`, `head.norm`)
and configure it in config.json: `classifier_pooling` ("cls" / "mean"),
`classifier_activation`, `classifier_bias`, `classifier_dropout`.

`read_task_head` tells what task a checkpoint folder holds, from its
config.json (`architectures`, `id2label`, `problem_type`) and its head
tensors; `hf_task_config` writes those keys for one of our models. The
tensors themselves go through `weight_map` like every other weight. Models
are named by class name (`keras_bert.models` builds on this package).
"""

import dataclasses
import os

from keras_bert.converters.hf_config_fields import HF_ACTIVATION_NAMES, activation
from keras_bert.json_files import read_json

TASK_MODELS = {
    "BertForSequenceClassification": "BertClassifier",
    "BertForTokenClassification": "BertTokenClassifier",
    "BertForQuestionAnswering": "BertQuestionAnswerer",
    "BertForMultipleChoice": "BertMultipleChoice",
    "ModernBertForSequenceClassification": "ModernBertClassifier",
    "ModernBertForTokenClassification": "ModernBertTokenClassifier",
    "ModernBertForQuestionAnswering": "ModernBertQuestionAnswerer",
}
# The family (`model_type`) each task class is of: a head is written only on a backbone of its family.
ARCHITECTURE_FAMILIES = {architecture: "modernbert" if architecture.startswith("ModernBert") else "bert"
                         for architecture in TASK_MODELS}
SEQUENCE_CLASSIFIERS = ("BertForSequenceClassification", "ModernBertForSequenceClassification")
LABELLED = SEQUENCE_CLASSIFIERS + ("BertForTokenClassification", "ModernBertForTokenClassification")
# ModernBERT's models whose prediction head config.json configures; those that also pool, with `classifier_pooling`.
WITH_PREDICTION_HEAD = ("ModernBertClassifier", "ModernBertTokenClassifier", "ModernBertQuestionAnswerer")
TASK_ARCHITECTURES = {model: architecture for architecture, model in TASK_MODELS.items()}
HEAD_PREFIXES = {"BertForQuestionAnswering": "qa_outputs"}  # the others: "classifier"
# transformers builds these without a pooler (`add_pooling_layer=False`): their checkpoints have none.
WITHOUT_POOLER = ("BertForMaskedLM", "BertForTokenClassification", "BertForQuestionAnswering")


def head_prefix(architecture):
    return HEAD_PREFIXES.get(architecture, "classifier")


@dataclasses.dataclass(frozen=True)
class TaskHead:
    """The task head a Hugging Face checkpoint holds.

    Attributes:
        architecture: the transformers class ("BertForSequenceClassification",
            ...), or None when config.json names none (then the head tensors
            fit several classes).
        num_labels: rows of the head's weight.
        label_names: `id2label` in id order, or None.
        problem_type: config.json's `problem_type`, or None.
        dropout: the head's dropout (`classifier_dropout`, else `hidden_dropout_prob`).
        shapes: head tensor name -> shape, for messages.
        prediction_head: ModernBERT's head arguments read from config.json (`pooling`,
            `head_activation`, `head_bias`); empty for BERT.
    """

    architecture: object
    num_labels: int
    label_names: object
    problem_type: object
    dropout: float
    shapes: dict
    prediction_head: dict = dataclasses.field(default_factory=dict)

    @property
    def what(self):
        """What the checkpoint is, in words: its class (or head tensors) and their shapes."""
        shapes = ", ".join(f"{name} {shape}" for name, shape in sorted(self.shapes.items()))
        if self.architecture:
            return f"a {self.architecture} checkpoint ({shapes})"
        return f"a task checkpoint with no `architectures` in its config.json (head: {shapes})"

    def model_classes(self):
        """The names of our classes this head loads into."""
        if self.architecture is not None:
            return [TASK_MODELS[self.architecture]]
        if "qa_outputs.weight" in self.shapes:
            return ["BertQuestionAnswerer"]
        return ["BertClassifier", "BertTokenClassifier", "BertMultipleChoice"]

    def check_model_class(self, class_name, source):
        """Raises ValueError unless the head loads into our class `class_name`, saying what the checkpoint is."""
        classes = self.model_classes()
        if class_name not in classes:
            backbone = "ModernBertBackbone" if class_name.startswith("ModernBert") else "BertBackbone"
            raise ValueError(
                f"{source} is {self.what}, not a head for {class_name}: load it with "
                f"{' or '.join(f'{name}.from_pretrained' for name in classes)}, or start a new {class_name} head "
                f"on its encoder with {class_name}({backbone}.from_pretrained(path), ...)."
            )
        if class_name in ("BertClassifier", "ModernBertClassifier"):
            self._check_classification(source, class_name)

    def _check_classification(self, source, class_name):
        if self.problem_type == "multi_label_classification":
            raise ValueError(
                f"{source} is {self.what} with problem_type='multi_label_classification' (a sigmoid per label); "
                f"{class_name} is single-label (softmax across labels) or a one-output regressor."
            )
        if self.problem_type == "regression" and self.num_labels != 1:
            raise ValueError(
                f"{source} is {self.what} with problem_type='regression' and {self.num_labels} outputs; "
                f"keras_bert's regressor ({class_name} with num_classes=1) has one."
            )

    def constructor_arguments(self, class_name):
        """Our task class's constructor arguments that the checkpoint decides."""
        head = dict(self.prediction_head) if class_name in WITH_PREDICTION_HEAD else {}
        if class_name != "ModernBertClassifier":
            head.pop("pooling", None)
        if class_name in ("BertClassifier", "BertTokenClassifier", "ModernBertClassifier", "ModernBertTokenClassifier"):
            regression = class_name in ("BertClassifier", "ModernBertClassifier") and self.num_labels == 1
            return {
                "num_classes": self.num_labels,
                "label_names": None if regression else self.label_names,
                "dropout": self.dropout,
                **head,
            }
        if class_name in ("BertMultipleChoice", "ModernBertQuestionAnswerer"):
            return {"dropout": self.dropout, **head}
        return {}


def _label_names(hf, num_labels, config_path):
    id2label = hf.get("id2label")
    if not isinstance(id2label, dict) or len(id2label) != num_labels:
        return None  # e.g. the default two labels of a config whose head has another size
    try:
        ordered = sorted((int(key), str(value)) for key, value in id2label.items())
    except ValueError:
        raise ValueError(f"{config_path}: id2label keys must be label ids. Received: {id2label!r}") from None
    if [key for key, _ in ordered] != list(range(num_labels)):
        raise ValueError(f"{config_path}: id2label must number the labels 0..{num_labels - 1}. Received: {id2label!r}")
    return [value for _, value in ordered]


def read_task_head(folder, tensors):
    """The `TaskHead` of a Hugging Face checkpoint folder, or None when it holds no task head.

    Args:
        folder: the checkpoint folder (its config.json is read).
        tensors: its tensors under canonical names (`bert.` dropped).
    """
    config_path = os.path.join(folder, "config.json")
    hf = read_json(config_path, "config")
    architectures = [name for name in hf.get("architectures") or [] if name in TASK_MODELS]
    architecture = architectures[0] if architectures else None
    prefix = head_prefix(architecture) if architecture else (
        "qa_outputs" if "qa_outputs.weight" in tensors else "classifier"
    )
    weight = tensors.get(f"{prefix}.weight")
    if architecture is None and weight is None:
        return None
    if weight is None:
        raise ValueError(
            f"{config_path} names {architecture}, but the checkpoint has no {prefix}.weight "
            f"(its head); it holds {len(tensors)} other tensors."
        )
    shapes = {name: tuple(tensors[name].shape) for name in (f"{prefix}.weight", f"{prefix}.bias") if name in tensors}
    num_labels = int(weight.shape[0])
    dropout = hf.get("classifier_dropout")
    dropout = float(hf.get("hidden_dropout_prob", 0.1) if dropout is None else dropout)
    return TaskHead(architecture, num_labels, _label_names(hf, num_labels, config_path), hf.get("problem_type"),
                    dropout, shapes, _prediction_head(hf, config_path) if architecture in ARCHITECTURE_FAMILIES
                    and ARCHITECTURE_FAMILIES[architecture] == "modernbert" else {})


def _prediction_head(hf, config_path):
    """ModernBERT's head arguments from its config.json (transformers' defaults where a key is absent)."""
    pooling = hf.get("classifier_pooling", "cls")
    if pooling not in ("cls", "mean"):
        raise ValueError(f"{config_path}: classifier_pooling={pooling!r}; keras_bert reads 'cls' or 'mean'.")
    return {
        "pooling": pooling,
        "head_activation": activation(hf, "classifier_activation", config_path),
        "head_bias": bool(hf.get("classifier_bias", False)),
    }


def read_masked_lm_head(config_path):
    """`ModernBertMaskedLM`'s head arguments from a ModernBERT config.json (transformers' defaults where absent)."""
    hf = read_json(config_path, "config")
    return {
        "head_activation": activation(hf, "classifier_activation", config_path),
        "head_bias": bool(hf.get("classifier_bias", False)),
        "decoder_bias": bool(hf.get("decoder_bias", True)),
    }


def masked_lm_config(head):
    """The config.json keys of ModernBERT's masked-LM head, from our `MaskedLMHead` `head` (`read_masked_lm_head`'s inverse)."""
    return {
        "classifier_activation": HF_ACTIVATION_NAMES[head.activation],
        "classifier_bias": head.transform_bias,
        "decoder_bias": head.decoder_bias,
    }


def hf_task_config(model, architecture):
    """The task keys of config.json for our task `model` exported as `architecture`."""
    if architecture == "ModernBertForMaskedLM":
        return masked_lm_config(model.masked_lm_head)
    head = {}
    if type(model).__name__ in WITH_PREDICTION_HEAD:
        head = {
            "classifier_dropout": model.dropout,
            "classifier_activation": HF_ACTIVATION_NAMES[model.head_activation],
            "classifier_bias": model.head_bias,
            "classifier_pooling": getattr(model, "pooling", "cls"),
        }
    if architecture not in LABELLED:
        return {"classifier_dropout": model.dropout} if architecture == "BertForMultipleChoice" else head
    names = model.label_names
    if not names or len(names) != model.num_classes:  # a regressor's label_names may be any list
        names = [f"LABEL_{i}" for i in range(model.num_classes)]
    config = {
        "id2label": {str(i): name for i, name in enumerate(names)},
        "label2id": {name: i for i, name in enumerate(names)},
        "classifier_dropout": model.dropout,
        **head,
    }
    if architecture in SEQUENCE_CLASSIFIERS:
        config["problem_type"] = "regression" if model.num_classes == 1 else "single_label_classification"
    return config
