"""What an explanation explains, by task: which output score, and the default targets (the predicted ones).

    classifier         one class's logit (default: the predicted class)
    regressor          the predicted value
    token_classifier   one word's logit of one tag, at its first wordpiece
                       (default: every word tagged other than "O")
    question_answerer  the start or the end logit of the predicted answer (default: both)
    multiple_choice    one choice's logit (default: the predicted choice)
"""

import dataclasses

import numpy as np

from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_multiple_choice import BertMultipleChoice
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.bert_token_classifier import BertTokenClassifier

# The fields one input holds, by task (what `explain` takes and the CLI reads, tab-separated).
TASK_FIELDS = {
    "classifier": "text or text<TAB>pair",
    "regressor": "text or text<TAB>pair",
    "token_classifier": "text",
    "question_answerer": "question<TAB>context",
    "multiple_choice": "context<TAB>choice<TAB>choice...",
}
# The longest answer the default question-answering target considers, in tokens (BERT's SQuAD default).
MAX_ANSWER_TOKENS = 30


def task_of(model):
    """The task kind of a model explanations support; ValueError for another model."""
    if isinstance(model, BertClassifier):
        return "regressor" if model.num_classes == 1 else "classifier"
    for cls, task in ((BertTokenClassifier, "token_classifier"), (BertQuestionAnswerer, "question_answerer"),
                      (BertMultipleChoice, "multiple_choice")):
        if isinstance(model, cls):
            return task
    raise ValueError(
        f"explanations need a task model with a prediction to explain (a classifier, regressor, token classifier, "
        f"question answerer or multiple-choice model). Received: {type(model).__name__}"
    )


def check_fields(task, fields, where):
    """Raises ValueError unless `fields` is the number of texts the task reads."""
    count = len(fields)
    valid = {"classifier": count in (1, 2), "regressor": count in (1, 2), "token_classifier": count == 1,
             "question_answerer": count == 2, "multiple_choice": count >= 3}[task]
    if not valid:
        raise ValueError(f"{where}: a {task} input is {TASK_FIELDS[task]}; got {count} field(s)")


@dataclasses.dataclass(frozen=True)
class Target:
    """One output score to explain.

    Attributes:
        name: the class, tag, choice or "start"/"end", as reports show it.
        index: the class, tag or choice index (None for a regressor's value and for start/end).
        output: the output's key ("start"/"end") for models with several outputs, else None.
        token: the position whose score it is (token classifier, question answerer), else None.
        row: the sequence whose tokens are explained (the choice; 0 otherwise).
        word: the word at `token`, for reports.
    """

    name: str
    index: int = None
    output: str = None
    token: int = None
    row: int = 0
    word: str = None

    def score(self, outputs):
        """The target's score in each row of a batch of the model's outputs: `(n,)`."""
        if self.output is not None:
            return outputs[self.output][:, self.token]
        if self.token is not None:
            return outputs[:, self.token, self.index]
        return outputs[:, self.index if self.index is not None else 0]

    def to_dict(self):
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None and k != "row"}


def _index_of(target, names, what):
    """A class / tag / choice given by name or index → its index; ValueError naming the valid ones."""
    if isinstance(target, str) and target in names:
        return names.index(target)
    try:
        index = int(target)
    except (TypeError, ValueError):
        index = None
    if index is None or not 0 <= index < len(names) or isinstance(target, bool):
        raise ValueError(f"target {target!r} is not a {what} of this model; its {what}s are {names}")
    return index


def class_names(model):
    """The class (or tag) names of a label head: its `label_names`, else "0", "1", ..."""
    return list(model.label_names or [str(i) for i in range(model.num_classes)])


def default_targets(task, model, outputs, words, word_of_token, spans, target=None):
    """The targets of one input, from the model's outputs on it (numpy, batch axis 1).

    Args:
        task: `task_of(model)`.
        model: the task model.
        outputs: its outputs on the input, numpy (a dict for question answering).
        words, word_of_token: the input's words (`group_words`) of the explained sequence.
        spans: the explained sequence's token spans (`PackedText.spans[row]`).
        target: what to explain instead of the prediction: a class, tag or
            choice (name or index), or "start"/"end"; None for the default.

    Returns:
        A list of `Target` (empty for a token classifier that tagged no word).
    """
    if task == "classifier":
        names = class_names(model)
        index = int(np.argmax(outputs[0])) if target is None else _index_of(target, names, "class")
        return [Target(names[index], index)]
    if task == "regressor":
        if target not in (None, "value", 0, "0"):
            raise ValueError(f"target {target!r}: a regressor has one output, its value (target 'value')")
        return [Target("value")]
    if task == "multiple_choice":
        names = [f"choice {i}" for i in range(outputs.shape[1])]
        index = int(np.argmax(outputs[0])) if target is None else _index_of(target, names, "choice")
        return [Target(names[index], index, row=index)]
    if task == "question_answerer":
        return _answer_targets(outputs, spans, target)
    return _tag_targets(model, outputs[0], words, word_of_token, target)


def _answer_targets(outputs, spans, target):
    if target not in (None, "start", "end"):
        raise ValueError(f"target {target!r}: a question answerer's targets are 'start' and 'end'")
    start, end = outputs["start"][0], outputs["end"][0]
    context = [i for i, span in enumerate(spans) if span is not None and span[0] == 1]
    best = max(
        ((i, j) for i in context for j in context if i <= j < i + MAX_ANSWER_TOKENS),
        key=lambda span: start[span[0]] + end[span[1]],
    )
    chosen = ("start", "end") if target is None else (target,)
    return [Target(name, output=name, token=best[0] if name == "start" else best[1]) for name in chosen]


def _tag_targets(model, logits, words, word_of_token, target):
    names = class_names(model)
    index = None if target is None else _index_of(target, names, "tag")
    first_tokens = {}
    for position, word in enumerate(word_of_token):
        if word is not None and word not in first_tokens:
            first_tokens[word] = position  # a word's tag is its first wordpiece's (as the pipelines read it)
    targets = []
    for word, position in first_tokens.items():
        tag = int(np.argmax(logits[position]))
        if (index is None and names[tag] != "O") or tag == index:
            targets.append(Target(names[tag], tag, token=position, word=words[word]["text"]))
    return targets
