"""BERT models: functional Keras models built from keras_bert.layers (keras and keras.ops only)."""

from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_masked_lm import BertMaskedLM
from keras_bert.models.bert_pretrainer import BertPretrainer
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.models.bert_task import BertTask

__all__ = ["BERT_SIZES", "BertBackbone", "BertMaskedLM", "BertPretrainer", "BertTask"]

from keras_bert.models.bert_classifier import BertClassifier  # noqa: E402
from keras_bert.models.bert_multiple_choice import BertMultipleChoice  # noqa: E402
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer  # noqa: E402
from keras_bert.models.bert_token_classifier import BertTokenClassifier  # noqa: E402

__all__ += ["BertClassifier", "BertMultipleChoice", "BertQuestionAnswerer", "BertTokenClassifier"]
