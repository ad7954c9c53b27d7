"""Keras int8 (`model.quantize("int8")`) against fp32 on this backend's CPU: the figures behind the int8 warning.

One process per Keras backend: a random `BertBackbone` of `--size`, its int8
copy (same weights), `predict_on_batch` at `--batch` x `--length`, timed in
alternating rounds (`common.time_interleaved`). Prints one JSON line with
tokens/s of each, the ratio int8 / fp32, the relative error of int8's
`sequence_output`, the load average and whether the CPU has AVX512-VNNI.

    KERAS_BACKEND=torch nice -n 10 .venv/bin/python -m benchmarks.studies.int8_speed.int8_speed  # base 8x128
    for b in tensorflow jax torch; do KERAS_BACKEND=$b nice -n 10 .venv/bin/python -m benchmarks.studies.int8_speed.int8_speed; done
    KERAS_BACKEND=jax .venv/bin/python -m benchmarks.studies.int8_speed.int8_speed --size tiny --batch 2 --length 16 --rounds 1

`EncoderBackbone.quantize` / `BertTask.quantize` warn on the backends where
this measured int8 slower than fp32 (`keras_bert/models/quantization.py`).

What chose what: nothing. Speed and int8's relative error on random weights and
random token ids, fixed settings; no data set, so no validation or test figure.
"""

import argparse
import json
import statistics

from benchmarks.common import loadavg, log, machine_info, time_interleaved


def measure(size="base", batch=8, length=128, rounds=5, min_seconds=0.5):
    """{"backend", "fp32", "int8" (tokens/s medians), "ratio", "relative_error", "loadavg", "vnni"}."""
    import keras

    from benchmarks.cases import _relative_error, quiet_quantize, token_inputs, with_dtype
    from keras_bert import BertBackbone

    keras.utils.set_random_seed(0)
    x = token_inputs(batch, length)
    fp32 = BertBackbone.from_size(size, dropout=0.0)
    int8 = quiet_quantize(with_dtype(fp32, "float32"), "int8")
    load_start = loadavg()
    log(f"  int8 vs fp32, {keras.backend.backend()} {size} {batch}x{length}, {rounds} rounds")
    seconds = time_interleaved({"fp32": lambda: fp32.predict_on_batch(x), "int8": lambda: int8.predict_on_batch(x)},
                               warmup=1, repeats=rounds, min_seconds=min_seconds)
    rates = {name: statistics.median(batch * length / s for s in secs) for name, secs in seconds.items()}
    error = _relative_error(int8.predict_on_batch(x)["sequence_output"], fp32.predict_on_batch(x)["sequence_output"])
    return {
        "backend": keras.backend.backend(), "config": f"{size} {batch}x{length}",
        "fp32_tokens_per_s": round(rates["fp32"], 1), "int8_tokens_per_s": round(rates["int8"], 1),
        "ratio": round(rates["int8"] / rates["fp32"], 3), "relative_error": error,
        "loadavg_start": load_start, "loadavg_end": loadavg(),
        "vnni": "avx512_vnni" in machine_info().get("isa", []),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="base")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=0.5, help="per timed repeat (loops the call)")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.size, args.batch, args.length, args.rounds, args.min_seconds)))


if __name__ == "__main__":
    main()
