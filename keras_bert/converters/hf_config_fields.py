"""The pieces of a Hugging Face `config.json` that families share: activation names (both ways), fields, checks."""

# Hugging Face activation names -> ours (`TransformerEncoder.activation`). "gelu_new",
# "gelu_pytorch_tanh" and "gelu_fast" are all the tanh approximation of GELU.
HF_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "gelu_fast": "gelu_approximate",
    "relu": "relu",
}
# Ours -> the name a written `config.json` gives (the inverse of `HF_ACTIVATIONS`).
HF_ACTIVATION_NAMES = {"gelu": "gelu", "gelu_approximate": "gelu_pytorch_tanh", "relu": "relu"}


def activation(hf, key, config_path, default="gelu"):
    """Our name for the activation `hf[key]` names; ValueError naming the ones we have."""
    name = hf.get(key, default)
    if name not in HF_ACTIVATIONS:
        raise ValueError(f"{config_path}: {key}={name!r} is not supported; supported: {sorted(HF_ACTIVATIONS)}.")
    return HF_ACTIVATIONS[name]


def position_embedding_type(hf, config_path, expected):
    """Raises ValueError unless the config's `position_embedding_type` (`expected` when absent) is `expected`."""
    position_type = hf.get("position_embedding_type", expected)
    if position_type != expected:
        raise ValueError(f"{config_path}: position_embedding_type={position_type!r}; only {expected!r} is supported.")


def constructor_arguments(hf, config_path, fields):
    """`{argument: convert(hf[key] or default)}` for `fields`: argument -> (key, convert, default or KeyError)."""
    arguments = {}
    for argument, (key, convert, *default) in fields.items():
        if key not in hf and not default:
            raise ValueError(f"{config_path} lacks the key {key!r}.")
        arguments[argument] = convert(hf.get(key, *default))
    return arguments
