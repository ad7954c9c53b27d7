"""ModernBERT's names: transformers' `ModernBertModel` / `ModernBertForMaskedLM` tensors and configs <-> ours.

The tensors: `embeddings.tok_embeddings`, `embeddings.norm`, per block
`layers.N.attn_norm` (none in block 0), `attn.Wqkv` (query, key and value
stacked as `(3 * hidden, hidden)`), `attn.Wo`, `mlp_norm`, `mlp.Wi` (the
gated projection, input half then gate half, `(2 * intermediate, hidden)`)
and `mlp.Wo`, then `final_norm`; biases only where the config's
`attention_bias`, `mlp_bias`, `norm_bias` ask for them. Task models put the
backbone under `model.`; `head.*`, `decoder.*` (the MLM head) and
`classifier.*` are theirs: every task class puts ModernBERT's prediction
head (`head.dense`, `head.norm`) before its output layer (`classifier`, also
the span head of `ModernBertForQuestionAnswering`), mapped in `TASK_HEADS`.

Configs come in two forms: the released checkpoints' (transformers 4.x:
`global_attn_every_n_layers`, `global_rope_theta`, `local_rope_theta`) and
transformers 5's `save_pretrained` (`layer_types`, one entry per layer, and
`rope_parameters` per layer type); where both are present, transformers
reads the second, and so does this module. A written config holds both.
"""

from keras_bert.converters.hf_bert import SIZE_FIELDS
from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_tables import attention, dense, each_layer, layer_norm, tensor

GLOBAL, LOCAL = "full_attention", "sliding_attention"  # transformers' layer types


def _token_id(value):
    return None if value is None else int(value)


CONFIG_FIELDS = {
    **SIZE_FIELDS,
    "dropout": ("attention_dropout", float, 0.0),
    "max_sequence_length": ("max_position_embeddings", int, 8192),
    "padding_id": ("pad_token_id", _token_id, 50283),
    "layer_norm_epsilon": ("norm_eps", float, 1e-5),
    "local_attention_window": ("local_attention", int, 128),
    "global_attention_every_n_layers": ("global_attn_every_n_layers", int, 3),
    "global_rope_wavelength": ("global_rope_theta", float, 160000.0),
    "local_rope_wavelength": ("local_rope_theta", float, 10000.0),
    "attention_bias": ("attention_bias", bool, False),
    "feed_forward_bias": ("mlp_bias", bool, False),
    "layer_norm_bias": ("norm_bias", bool, False),
}
DROPOUT_KEYS = ("embedding_dropout", "attention_dropout", "mlp_dropout")


def layer_types(num_layers, every_n_layers):
    """transformers' `layer_types`: block `i` is global when `i % every_n_layers == 0`."""
    return [GLOBAL if i % every_n_layers == 0 else LOCAL for i in range(num_layers)]


def _every_n_layers(types, arguments, config_path):
    """The `global_attention_every_n_layers` that gives `types`; ValueError when no n does."""
    num_layers = arguments["num_layers"]
    global_layers = [i for i, kind in enumerate(types) if kind == GLOBAL]
    if len(global_layers) > 1:
        every = global_layers[1]
    else:  # only block 0 is global: any n >= num_layers says so; keep the config's own where it fits
        every = max(arguments["global_attention_every_n_layers"], num_layers)
    if list(types) != layer_types(num_layers, every):
        raise ValueError(
            f"{config_path}: layer_types={list(types)} is not global attention every n layers from layer 0, "
            "the only pattern ModernBertBackbone builds."
        )
    return every


def _rope_wavelength(hf, layer_type, default, config_path):
    """The rotary base of one layer type, from `rope_parameters` (transformers 5), else the 4.x key's value."""
    parameters = (hf.get("rope_parameters") or {}).get(layer_type)
    if parameters is None:
        return default
    if parameters.get("rope_type", "default") != "default":
        raise ValueError(
            f"{config_path}: rope_parameters[{layer_type!r}] has rope_type={parameters['rope_type']!r}; "
            "only the default (unscaled) rotary embedding is supported."
        )
    return float(parameters.get("rope_theta", default))


def _read_layout(arguments, hf, config_path):
    """Completes the fields with what a transformers 5 config states its own way, and the one dropout rate."""
    if hf.get("rope_scaling"):
        raise ValueError(
            f"{config_path}: rope_scaling={hf['rope_scaling']!r}; only unscaled rotary embeddings are supported."
        )
    types = hf.get("layer_types")
    if types is not None:
        if len(types) != arguments["num_layers"]:
            raise ValueError(
                f"{config_path}: {len(types)} layer_types for num_hidden_layers={arguments['num_layers']}."
            )
        arguments["global_attention_every_n_layers"] = _every_n_layers(types, arguments, config_path)
    for argument, layer_type in (("global_rope_wavelength", GLOBAL), ("local_rope_wavelength", LOCAL)):
        arguments[argument] = _rope_wavelength(hf, layer_type, arguments[argument], config_path)
    # One rate in keras_bert: the largest of the three, so a model that trained with dropout keeps some.
    arguments["dropout"] = max(float(hf.get(key) or 0.0) for key in DROPOUT_KEYS)


def written_config(backbone):
    """The entries of a written `config.json` beyond the fields: transformers 5's layer types and rotary bases."""
    return {
        "layer_types": layer_types(backbone.num_layers, backbone.global_attention_every_n_layers),
        "rope_parameters": {
            GLOBAL: {"rope_type": "default", "rope_theta": backbone.global_rope_wavelength},
            LOCAL: {"rope_type": "default", "rope_theta": backbone.local_rope_wavelength},
        },
        **dict.fromkeys(DROPOUT_KEYS, backbone.dropout),
        "initializer_range": 0.02,
        "tie_word_embeddings": True,
        "dtype": "float32",
    }


# A pre-LN `TransformerEncoder` (gated feed-forward network) against one `layers.N`.
BLOCK = {
    "attention_layer_norm": layer_norm("attn_norm"),  # None in block 0
    "attention": attention("attn.Wqkv", "attn.Wo"),
    "output_layer_norm": layer_norm("mlp_norm"),
    "intermediate_dense": dense("mlp.Wi"),
    "output_dense": dense("mlp.Wo"),
}
BACKBONE = {
    "embeddings.token_embedding.embeddings": tensor("embeddings.tok_embeddings.weight"),
    "embeddings.layer_norm": layer_norm("embeddings.norm"),
    "transformer_layers": each_layer("layers.{index}", BLOCK),
    "final_layer_norm": layer_norm("final_norm"),
}

# transformers' `ModernBertPredictionHead` against our `PredictionHead` (`prediction_head`).
PREDICTION_HEAD = {"prediction_head.dense": dense("head.dense"), "prediction_head.layer_norm": layer_norm("head.norm")}
# Our task models whose heads transformers' ModernBertFor* classes hold (see `hf_tasks`); the span
# head's dense layer gives (start, end) as `classifier` rows 0 and 1.
TASK_HEADS = {
    "ModernBertClassifier": {**PREDICTION_HEAD, "output_dense": dense("classifier")},
    "ModernBertTokenClassifier": {**PREDICTION_HEAD, "output_dense": dense("classifier")},
    "ModernBertQuestionAnswerer": {**PREDICTION_HEAD, "span_head.dense": dense("classifier")},
}

# The masked-LM head (`ModernBertMaskedLM`, and pretrainers on a ModernBERT): the prediction head, then the
# decoder, tied to the token embedding (transformers does not store `decoder.weight`), and its bias when it has one.
HEADS = {
    "masked_lm_head": {
        "transform_dense": dense("head.dense"),
        "transform_layer_norm": layer_norm("head.norm"),
        "output_bias": tensor("decoder.bias"),
    },
}
TIED_NAMES = {"decoder.weight": "embeddings.tok_embeddings.weight"}

FAMILY = Family(
    model_type="modernbert", title="ModernBERT", backbone_class="ModernBertBackbone", prefix="model.",
    config_fields=CONFIG_FIELDS, backbone=BACKBONE, activation_key="hidden_activation", adjust_config=_read_layout,
    normalize_first=True, heads=HEADS, task_heads=TASK_HEADS, head_prefixes=("head.", "decoder.", "classifier."),
    tied_names=TIED_NAMES, mlm_name="head.dense.weight",
    model_class="ModernBertModel", written_config=written_config,
)
