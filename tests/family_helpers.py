"""Shared pieces of the BERT-family tests: random tiny transformers models, padded batches, parity checks.

Numerical truth comes from transformers (on torch, installed on every
backend): each test builds a random tiny model of the family with
transformers, perturbs every weight (random init leaves biases at 0 and
LayerNorms at 1, which would hide mapping errors), saves it with
`save_pretrained` and compares our model loaded from that folder with it.
"""

import keras
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

# Parity on random tiny configs: every family's backbone must match transformers this closely.
ATOL = 1e-5


def hf_model(class_name, config, seed=0):
    """A transformers model of `class_name` on `config`, every weight perturbed, in eval mode."""
    torch.manual_seed(seed)
    config._attn_implementation = "eager"
    model = getattr(transformers, class_name)(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def padded_batch(vocabulary_size, padding_id=0, segments=True, batch_size=4, length=10, seed=0):
    """Random token ids (never `padding_id`), odd rows padded (with `padding_id`): row 1 over its last 3 tokens, row 3 over 6."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(padding_id + 1, vocabulary_size, size=(batch_size, length)).astype("int32")
    padding_mask = np.ones((batch_size, length), "int32")
    padding_mask[1::4, -3:] = 0
    padding_mask[3::4, -6:] = 0
    token_ids[padding_mask == 0] = padding_id
    inputs = {"token_ids": token_ids, "padding_mask": padding_mask}
    if segments:
        segment_ids = np.zeros((batch_size, length), "int32")
        segment_ids[:, length // 2 :] = 1
        inputs["segment_ids"] = segment_ids * padding_mask
    return inputs


def hf_forward(model, inputs, **kwargs):
    """transformers' outputs for our input dict (segment ids only when the dict has them)."""
    arguments = {
        "input_ids": torch.tensor(inputs["token_ids"], dtype=torch.long),
        "attention_mask": torch.tensor(inputs["padding_mask"], dtype=torch.long),
    }
    if "segment_ids" in inputs:
        arguments["token_type_ids"] = torch.tensor(inputs["segment_ids"], dtype=torch.long)
    with torch.no_grad():
        return model(**arguments, **kwargs)


def assert_real_tokens_close(ours, reference, padding_mask, atol=ATOL):
    """Compares `(batch, seq, ...)` arrays at real tokens only (padded positions mean nothing in either)."""
    real = np.asarray(padding_mask).astype(bool)
    ours = keras.ops.convert_to_numpy(ours)
    reference = reference.detach().numpy() if hasattr(reference, "detach") else np.asarray(reference)
    assert ours.shape == reference.shape, (ours.shape, reference.shape)
    np.testing.assert_allclose(ours[real], reference[real], atol=atol)


def assert_close(ours, reference, atol=ATOL):
    reference = reference.detach().numpy() if hasattr(reference, "detach") else np.asarray(reference)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(ours), reference, atol=atol)
