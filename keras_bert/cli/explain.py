"""`keras-bert explain`: which words drove a model's prediction (token attributions), as files.

    keras-bert explain runs/sst "a gorgeous, witty, seductive movie." --out explained/
    keras-bert explain runs/sst/model.keras --file reviews.txt --out explained/ --method grad_x_input
    keras-bert explain runs/sst --file reviews.txt --out explained/ --deletion-curve

MODEL is a `.keras` file or a finetune folder, resolved as `keras-bert
predict` resolves them (exports cannot be explained: they hold no gradients).
Inputs are texts as arguments, `--file` or stdin, one per line, the fields of
pairs, questions and choices separated by a tab, as `predict` reads them.
Writes `OUT/attributions.jsonl` (one row per input and target: `tokens`,
`words`, `attributions`, `word_attributions`, `target`, `score_input`,
`score_baseline`, ...), `OUT/report.html` (one self-contained page, each text
shaded word by word) and `OUT/explanation_NNN.png` (a bar per word); with
`--deletion-curve`, also `OUT/deletion_curve.json`. Every input is checked
before any gradient is computed: an empty line, a text longer than the
sequence, or a target the model does not have ends the command with a
one-line error and nothing written.
"""

import importlib.util
import os
import sys

from keras_bert.cli.errors import UserError
from keras_bert.cli.predict import _read_inputs
from keras_bert.cli.preflight import existing_file, local_model, model_reference

HELP = "explain predictions: token attributions (integrated gradients) as JSON lines, an HTML page and PNGs"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"model": (None, local_model), "file": ("--file", existing_file),
          "tokenizer": ("--tokenizer", model_reference)}
EPILOG = (
    "Targets (--target): a class name or index for a classifier (default: the predicted class); a tag for a token "
    "classifier (default: every word tagged other than O, one row each); start or end for a question answerer "
    "(default: both, at the predicted answer); a choice index for multiple choice (default: the predicted one). "
    "Texts longer than --sequence-length are refused (explanations read one sequence, never windows)."
)


def add_explain_arguments(parser):
    """Adds the `keras-bert explain` arguments to an argparse (sub)parser."""
    parser.epilog = EPILOG
    parser.add_argument("model", help="a .keras task model or a finetune folder")
    parser.add_argument("texts", nargs="*", help="inputs (fields separated by a tab); default: --file or stdin")
    parser.add_argument("--out", required=True, help="the folder for attributions.jsonl, report.html and the PNGs")
    parser.add_argument("--file", help="a text file with one input per line ('-' for stdin)")
    parser.add_argument("--method", choices=["ig", "grad_x_input"], default="ig",
                        help="integrated gradients, or gradient × input (one gradient, no completeness)")
    parser.add_argument("--steps", type=int, default=64, help="integration points of integrated gradients")
    parser.add_argument("--integration", choices=["gausslegendre", "riemann_trapezoid"], default="gausslegendre",
                        help="the quadrature rule along the path")
    parser.add_argument("--baseline", choices=["pad", "mask"], default="pad",
                        help="the token every wordpiece becomes in the baseline ([CLS] and [SEP] are kept)")
    parser.add_argument("--target", help="what to explain instead of the prediction (see below)")
    parser.add_argument("--tokenizer", help="vocab.txt or checkpoint folder (default: found beside the model)")
    parser.add_argument("--sequence-length", type=int,
                        help="the longest input, in tokens (default: the run's sequence length, else the model's)")
    parser.add_argument("--batch-size", type=int, default=32, help="integration points per forward and backward pass")
    parser.add_argument("--deletion-curve", action="store_true",
                        help="classifiers: also write deletion_curve.json (most-attributed vs random words deleted)")
    parser.add_argument("--deletion-words", type=int, default=5, help="--deletion-curve: delete up to this many words")
    parser.add_argument("--deletion-draws", type=int, default=5, help="--deletion-curve: random draws per text")
    parser.add_argument("--seed", type=int, default=0, help="--deletion-curve: seed of the random draws")


def _check_options(args):
    """One-line errors for options that cannot work, before the model loads."""
    smallest = 2 if args.integration == "riemann_trapezoid" else 1
    if args.steps < smallest:
        raise UserError(f"--steps must be at least {smallest} for --integration {args.integration}")
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if args.sequence_length is not None and args.sequence_length < 3:
        raise UserError("--sequence-length must be at least 3 ([CLS], a token, [SEP])")
    if args.deletion_words < 1 or args.deletion_draws < 1:
        raise UserError("--deletion-words and --deletion-draws must be at least 1")
    if os.path.isfile(args.out):
        raise UserError(f"--out {args.out} is a file; give a folder")
    if os.path.isfile(os.path.join(args.model, "saved_model.pb")):
        raise UserError(f"{args.model}: an export holds no gradients; explain its .keras model or finetune folder")
    if importlib.util.find_spec("matplotlib") is None:
        raise UserError("the PNGs need matplotlib: pip install 'keras-bert[explain]'")


def _split(inputs):
    """Input lines → their tab-separated fields; a blank line or an empty field is an error."""
    rows = []
    for where, line in inputs:
        fields = line.split("\t")
        if not line.strip() or any(not field.strip() for field in fields):
            raise UserError(f"{where}: empty input (or an empty tab-separated field): nothing to explain")
        rows.append(fields)
    return rows


def run_explain(args):
    """Writes the explanations of every input to --out; returns the exit status (0)."""
    _check_options(args)
    inputs = _read_inputs(args)
    rows = _split(inputs)
    # defers keras and TensorFlow (the loaders build models, the tokenizer runs tf-text): `--help` stays light
    from keras_bert.explain import TokenAttributor, deletion_curve, write_attribution_report
    # defers keras, as above
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer

    files = find_model(args.model)
    tokenizer = load_tokenizer(files, args.tokenizer, flag="--tokenizer")
    model = load_keras_model(files)
    limit = model.backbone.max_sequence_length if hasattr(model, "backbone") else None
    length = args.sequence_length or files.job.get("sequence_length") or limit
    if limit is not None and length > limit:
        raise UserError(f"--sequence-length {length} is longer than the model's max_sequence_length {limit}")
    try:
        attributor = TokenAttributor(model, tokenizer, method=args.method, steps=args.steps, baseline=args.baseline,
                                     integration=args.integration, sequence_length=length, batch_size=args.batch_size)
        prepared = [attributor.prepare(fields, where, args.target) for (where, _), fields in zip(inputs, rows)]
    except ValueError as error:
        raise UserError(str(error)) from None
    if args.deletion_curve and attributor.task != "classifier":
        raise UserError(f"--deletion-curve reads a class probability: {files.path} is a {attributor.task}")
    explained = []
    for (where, _), (packed, targets) in zip(inputs, prepared):
        if not targets:
            print(f"{where}: no word is tagged (every tag is O): no explanation", file=sys.stderr)
        explained += [attributor.attribute(packed, target) for target in targets]
    curve = None
    if args.deletion_curve:
        curve = deletion_curve(attributor, rows, max_words=args.deletion_words, draws=args.deletion_draws,
                               seed=args.seed, batch_size=args.batch_size, rows=explained)
    title = f"Token attributions: {os.path.basename(files.path)}"
    extra = {"deletion_curve.json": curve.to_dict()} if curve is not None else None
    written = write_attribution_report(explained, args.out, attributor.task, title=title, extra=extra)
    if curve is not None:
        print(f"deletion curve over {curve.texts} texts: area {curve.area_top:.4f} deleting the most-attributed words "
              f"first, {curve.area_random:.4f} deleting random ones", file=sys.stderr)
    pictures = sum(p.endswith(".png") for p in written)
    print(f"wrote {len(explained)} explanation(s) to {args.out}: attributions.jsonl, report.html and {pictures} PNG(s)",
          file=sys.stderr)
    return 0
