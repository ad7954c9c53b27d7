"""ElectraGenerator: an ELECTRA backbone with its masked-LM head (the generator)."""

import keras

from keras_bert.models.bert_masked_lm import BertMaskedLM
from keras_bert.models.electra_backbone import ElectraBackbone


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraGenerator(BertMaskedLM):
    """An `ElectraBackbone` with ELECTRA's generator head (transformers' `ElectraForMaskedLM`).

    `BertMaskedLM` on an ELECTRA backbone: the head is `Dense(embedding_dim)
    -> GELU -> LayerNorm`, then the transposed token embedding plus a bias
    (the decoder is tied), applied at `mask_positions` only. Its own class for
    checkpoints: `from_pretrained` loads a Hugging Face `ElectraForMaskedLM`
    folder with its head (`generator_predictions.*`, `generator_lm_head.bias`).

    Inputs, output and training data as `BertMaskedLM`'s.

    Args:
        backbone: a `keras_bert.ElectraBackbone`.
    """

    backbone_class = ElectraBackbone
