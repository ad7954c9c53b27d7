"""BERT models: functional Keras models built from keras_bert.layers (keras and keras.ops only)."""

from keras_bert.models.albert_backbone import AlbertBackbone
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_masked_lm import BertMaskedLM
from keras_bert.models.bert_multiple_choice import BertMultipleChoice
from keras_bert.models.bert_pretrainer import BertPretrainer
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.models.bert_task import BertTask
from keras_bert.models.bert_text_embedder import BertTextEmbedder
from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.distil_bert_backbone import DistilBertBackbone
from keras_bert.models.electra_backbone import ElectraBackbone
from keras_bert.models.electra_discriminator import ElectraDiscriminator
from keras_bert.models.electra_generator import ElectraGenerator
from keras_bert.models.electra_pretrainer import ElectraPretrainer
from keras_bert.models.encoder_backbone import EncoderBackbone
from keras_bert.models.modern_bert_backbone import ModernBertBackbone
from keras_bert.models.modern_bert_classifier import ModernBertClassifier
from keras_bert.models.modern_bert_masked_lm import ModernBertMaskedLM
from keras_bert.models.modern_bert_question_answerer import ModernBertQuestionAnswerer
from keras_bert.models.modern_bert_token_classifier import ModernBertTokenClassifier
from keras_bert.models.roberta_backbone import RobertaBackbone
from keras_bert.models.distiller import Distiller
from keras_bert.models.student_from_teacher import student_from_teacher
from keras_bert.models.multiple_negatives_ranking_loss import MultipleNegativesRankingLoss

__all__ = [
    "AlbertBackbone",
    "BERT_SIZES",
    "BertBackbone",
    "BertClassifier",
    "BertMaskedLM",
    "BertMultipleChoice",
    "BertPretrainer",
    "BertQuestionAnswerer",
    "BertTask",
    "BertTextEmbedder",
    "BertTokenClassifier",
    "DistilBertBackbone",
    "ElectraBackbone",
    "ElectraDiscriminator",
    "ElectraGenerator",
    "ElectraPretrainer",
    "EncoderBackbone",
    "ModernBertBackbone",
    "ModernBertClassifier",
    "ModernBertMaskedLM",
    "ModernBertQuestionAnswerer",
    "ModernBertTokenClassifier",
    "RobertaBackbone",
    "Distiller",
    "student_from_teacher",
    "MultipleNegativesRankingLoss",
]
