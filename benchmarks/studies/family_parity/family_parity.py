"""Real-size parity of the BERT family's backbones with transformers (random weights, no download).

No real ALBERT / DistilBERT / ELECTRA / RoBERTa checkpoint is available
offline here, so this builds each family's published base configuration
with transformers (random weights at transformers' own initialisation),
saves it with `save_pretrained`, loads it with keras_bert, and reports the
largest absolute difference of `sequence_output` (real tokens only) and
`pooled_output` on a padded batch of random token ids. The tests check the
same on tiny configs (<= 1e-5); this shows the error at full size.

    KERAS_BACKEND=jax python -m benchmarks.studies.family_parity.family_parity [--length 128] [--batch 4]
"""

import argparse
import os
import sys
import tempfile
import time

import keras
import numpy as np
import torch
import transformers

import keras_bert

# Published sizes: albert-base-v2, distilbert-base-uncased, electra-base-discriminator,
# electra-small-generator (E=128 -> H=256: projected), roberta-base.
CASES = {
    "albert-base-v2": (
        "AlbertModel",
        transformers.AlbertConfig(
            vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
            intermediate_size=3072,
        ),
        keras_bert.AlbertBackbone,
    ),
    "distilbert-base": (
        "DistilBertModel",
        transformers.DistilBertConfig(vocab_size=30522),
        keras_bert.DistilBertBackbone,
    ),
    "electra-base": (
        "ElectraModel",
        transformers.ElectraConfig(
            vocab_size=30522, embedding_size=768, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
            intermediate_size=3072,
        ),
        keras_bert.ElectraBackbone,
    ),
    "electra-small-generator": (
        "ElectraModel",
        transformers.ElectraConfig(
            vocab_size=30522, embedding_size=128, hidden_size=256, num_hidden_layers=12, num_attention_heads=4,
            intermediate_size=1024,
        ),
        keras_bert.ElectraBackbone,
    ),
    "roberta-base": (
        "RobertaModel",
        transformers.RobertaConfig(
            vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1,
        ),
        keras_bert.RobertaBackbone,
    ),
}


def padded_batch(batch, length, vocabulary_size, padding_id, rng):
    token_ids = rng.integers(padding_id + 1, vocabulary_size, size=(batch, length)).astype("int32")
    padding_mask = np.ones((batch, length), "int32")
    for row in range(1, batch, 2):
        padding_mask[row, length - length // (row + 1) :] = 0  # rows padded by different amounts
    token_ids[padding_mask == 0] = padding_id
    return token_ids, padding_mask


def run_case(name, class_name, config, backbone_cls, batch, length, rng):
    torch.manual_seed(0)
    config._attn_implementation = "eager"
    hf = getattr(transformers, class_name)(config).eval()
    padding_id = config.pad_token_id or 0
    token_ids, padding_mask = padded_batch(batch, length, config.vocab_size, padding_id, rng)
    with tempfile.TemporaryDirectory() as folder:
        hf.save_pretrained(folder)
        start = time.perf_counter()
        backbone = backbone_cls.from_pretrained(folder)
        load_s = time.perf_counter() - start
    inputs = {"token_ids": token_ids, "padding_mask": padding_mask}
    hf_inputs = {"input_ids": torch.tensor(token_ids, dtype=torch.long), "attention_mask": torch.tensor(padding_mask)}
    if "segment_ids" in backbone.input_names:
        inputs["segment_ids"] = np.zeros_like(token_ids)
        hf_inputs["token_type_ids"] = torch.zeros_like(hf_inputs["input_ids"])
    ours = backbone.predict(inputs, verbose=0)
    with torch.no_grad():
        reference = hf(**hf_inputs)
    real = padding_mask.astype(bool)
    expected = reference.last_hidden_state.numpy()
    sequence_error = np.abs(np.asarray(ours["sequence_output"])[real] - expected[real]).max()
    pooled = reference.pooler_output if getattr(reference, "pooler_output", None) is not None else reference.last_hidden_state[:, 0]
    pooled_error = np.abs(np.asarray(ours["pooled_output"]) - pooled.numpy()).max()
    scale = np.abs(expected[real]).max()
    print(
        f"| {name} | {keras.backend.backend()} | {backbone.count_params():,} | {batch}x{length} | "
        f"{sequence_error:.2e} | {pooled_error:.2e} | {scale:.2f} | {load_s:.1f} |",
        flush=True,
    )
    return max(sequence_error, pooled_error)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| model (random weights) | backend | parameters | batch | max abs err sequence_output (real tokens) "
          "| max abs err pooled_output | max abs value | load s |")
    print("|---|---|---|---|---|---|---|---|")
    worst = max(run_case(name, *CASES[name], args.batch, args.length, rng) for name in args.cases)
    print(f"worst error {worst:.2e} (tolerance {args.tolerance:g})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
