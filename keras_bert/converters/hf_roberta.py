"""RoBERTa's names: Hugging Face `RobertaModel` / `RobertaForMaskedLM` tensors <-> `RobertaBackbone`.

RoBERTa's tensors are named as BERT's (under `roberta.`); what differs is
the configuration: positions start after the padding id, one token type,
LayerNorm epsilon 1e-5.
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_family import Family


def _positions_after_padding(arguments, hf, config_path):
    """The position table has `max_position_embeddings` rows, of which the first `pad_token_id + 1` are never used.

    Positions count from `pad_token_id + 1`: the longest input is
    `max_position_embeddings - pad_token_id - 1` tokens (512 for roberta-base's 514 rows).
    """
    rows = arguments["max_sequence_length"]  # BERT's field: max_position_embeddings
    arguments["max_sequence_length"] = rows - arguments["padding_id"] - 1
    if arguments["max_sequence_length"] < 1:
        raise ValueError(
            f"{config_path}: max_position_embeddings={rows} leaves no position after pad_token_id="
            f"{arguments['padding_id']} (RoBERTa's positions start at pad_token_id + 1)."
        )


FAMILY = Family(
    model_type="roberta", title="RoBERTa", backbone_class="RobertaBackbone", prefix="roberta.",
    config_fields={**hf_bert.CONFIG_FIELDS, "padding_id": ("pad_token_id", int, 1)},
    position_embedding_type="absolute", adjust_config=_positions_after_padding, backbone=hf_bert.BACKBONE,
    # `RobertaForMaskedLM` checkpoints have no pooler.
    optional_names=hf_bert.OPTIONAL_NAMES, head_prefixes=("lm_head.", "classifier.", "qa_outputs."),
)
