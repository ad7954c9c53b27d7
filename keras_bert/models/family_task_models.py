"""Which task model class a backbone's family takes: transformers' heads differ per family.

BERT's task heads (`BertClassifier`, ...) sit on every family's backbone;
ModernBERT's checkpoints hold heads of their own (a prediction head before
the output layer, `classifier_pooling`), so a task on a `ModernBertBackbone`
is built as its `ModernBert*` class. The fine-tuning job asks here, so a
`--init` of either family gets the head its checkpoints share.
"""

from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.modern_bert_classifier import ModernBertClassifier
from keras_bert.models.modern_bert_question_answerer import ModernBertQuestionAnswerer
from keras_bert.models.modern_bert_token_classifier import ModernBertTokenClassifier

# (backbone model_type, BERT's task class) -> the family's own class.
FAMILY_TASK_MODELS = {
    ("modernbert", BertClassifier): ModernBertClassifier,
    ("modernbert", BertTokenClassifier): ModernBertTokenClassifier,
    ("modernbert", BertQuestionAnswerer): ModernBertQuestionAnswerer,
}


def task_model_class(task_class, backbone):
    """The class to build for the task `task_class` (a BERT task model class) on `backbone`."""
    return FAMILY_TASK_MODELS.get((getattr(backbone, "model_type", "bert"), task_class), task_class)
