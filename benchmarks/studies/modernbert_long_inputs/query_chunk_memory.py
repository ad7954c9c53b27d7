"""Peak memory of one ModernBERT-base forward at 8,192 tokens with global attention in query chunks and without.

    .venv/bin/python -m benchmarks.studies.modernbert_long_inputs.query_chunk_memory --report FILE.json

For TensorFlow and JAX (on torch, `scaled_dot_product_attention` is called whole), one child process per
(backend, chunks on/off): `measure_memory` of the study (the model loaded, then two forward calls, peak RSS
of each) on transformers' random ModernBERT-base weights, float32. "off" sets
`keras_bert.layers._fused.QUERY_CHUNK` above the length, the layer's form before chunking.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

from benchmarks.common import loadavg, machine_info, versions

MODULE = "benchmarks.studies.modernbert_long_inputs.query_chunk_memory"
LENGTH = 8192


def worker(folder, chunks):
    """Runs in the child: the study's memory rows for this backend, chunks "on" or "off"."""
    import keras

    from benchmarks.studies.modernbert_long_inputs import modernbert_long_inputs as study
    from keras_bert.layers import _fused

    if chunks == "off":
        _fused.QUERY_CHUNK = 10**9
    rows = study.measure_memory(folder, "modernbert", "keras_bert", keras.backend.backend(), "fp32", [LENGTH],
                                quick=False, calls=2)
    return [{**row, "query_chunks": chunks} for row in rows]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", help="write the JSON results here (required)")
    parser.add_argument("--backends", default="tensorflow,jax")
    parser.add_argument("--worker", nargs=3, metavar=("FOLDER", "CHUNKS", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        folder, chunks, output = args.worker
        with open(output, "w", encoding="utf-8") as f:
            json.dump(worker(folder, chunks), f)
        return 0
    if not args.report:
        parser.error("--report is required")
    from benchmarks.studies.modernbert_long_inputs import modernbert_long_inputs as study

    started, load_start, rows = datetime.datetime.now(datetime.timezone.utc), loadavg(), []
    with tempfile.TemporaryDirectory(prefix="keras-bert-query-chunks-") as scratch:
        study.prepare(scratch, quick=False)
        for backend in args.backends.split(","):
            for chunks in ("on", "off"):
                output = os.path.join(scratch, f"{backend}-{chunks}.json")
                env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
                subprocess.run([sys.executable, "-m", MODULE, "--worker", scratch, chunks, output],
                               env=env, check=True, timeout=1800)
                with open(output, encoding="utf-8") as f:
                    rows.extend(json.load(f))
    results = {"date": started.strftime("%Y-%m-%d %H:%M UTC"), "command": " ".join(["python -m", MODULE] + (argv if argv is not None else sys.argv[1:])),
               "loadavg_start": load_start, "loadavg_end": loadavg(), "machine": machine_info(),
               "versions": versions(), "length": LENGTH, "rows": rows}
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    for row in rows:
        print(f"{row['backend']:10} chunks {row['query_chunks']:3} call {row['call']}: peak {row['peak_rss_mib']:,.0f} MiB "
              f"(before {row['rss_before_mib']:,.0f}), {row['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
