"""Where a long ModernBERT forward spends its time: one global and one local block, ours and transformers'.

Three ModernBERT-base-wide models of one and two blocks (random weights, one
transformers folder each, both sides load it): `[global]`, `[global, local]`
and `[global, global]`. In the same alternating rounds as transformers (sdpa,
float32), on this process's Keras backend:

- a local block costs `t([global, local]) - t([global])`;
- a global block costs `t([global, global]) - t([global])`;
- `t([global])` also holds the embeddings and the final norm.

    KERAS_BACKEND=jax .venv/bin/python -m benchmarks.studies.modernbert_long_inputs.layer_costs --length 8192 --rounds 3
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

from benchmarks.common import loadavg, log, time_interleaved
from benchmarks.studies.modernbert_long_inputs.modernbert_long_inputs import (
    load,
    modernbert_inputs,
)

LAYOUTS = {"G": ["full_attention"], "GL": ["full_attention", "sliding_attention"],
           "GG": ["full_attention", "full_attention"]}


def write_folders(folder):
    import torch  # the folders are written with transformers
    import transformers

    for name, layer_types in LAYOUTS.items():
        config = transformers.ModernBertConfig(vocab_size=1000, num_hidden_layers=len(layer_types),
                                               layer_types=layer_types, pad_token_id=0, bos_token_id=1,
                                               eos_token_id=2, cls_token_id=1, sep_token_id=2)
        torch.manual_seed(0)
        transformers.ModernBertModel(config).save_pretrained(os.path.join(folder, name, "modernbert"))


def main(argv=None):
    import keras  # the backend of this process

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keras-bert-layer-costs-") as folder:
        write_folders(folder)
        x = modernbert_inputs({"vocab_size": 1000, "cls_token_id": 1, "sep_token_id": 2}, args.length)
        calls = {(impl, name): load(os.path.join(folder, name), "modernbert", impl, "fp32") for impl in ("keras_bert", "hf_transformers")
                 for name in LAYOUTS}
        fns = {key: (lambda call=call: call(x)) for key, call in calls.items()}
        outputs = {key: fn() for key, fn in fns.items()}  # the warm-up calls
        errors = {name: float(np.abs(outputs[("keras_bert", name)] - outputs[("hf_transformers", name)]).max())
                  for name in LAYOUTS}
        log(f"{len(fns)} models x {args.rounds} rounds at {args.length} tokens ...")
        times = time_interleaved(fns, warmup=0, repeats=args.rounds)
    median = {key: statistics.median(t) for key, t in times.items()}
    result = {"backend": keras.backend.backend(), "length": args.length, "rounds": args.rounds,
              "loadavg_end": loadavg(), "max_abs_diff_vs_transformers": errors}
    for impl in ("keras_bert", "hf_transformers"):
        first = median[(impl, "G")]
        result[impl] = {"global block + embeddings s": first,
                        "local block s": median[(impl, "GL")] - first,
                        "global block s": median[(impl, "GG")] - first}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
