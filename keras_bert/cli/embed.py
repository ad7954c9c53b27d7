"""`keras-bert embed`: sentence embeddings of raw text, as JSON lines or a .npy file.

    keras-bert embed path/to/all-MiniLM-L6-v2 "A man is eating food." "Someone is eating a meal."
    keras-bert embed path/to/all-MiniLM-L6-v2 --file sentences.txt --out vectors.npy
    keras-bert embed saved_models/minilm --file sentences.txt     # an exported embedder SavedModel

The model is a sentence-transformers folder (its pooling, normalisation and
max_seq_length are read from it), a Hugging Face BERT folder (mean pooling),
a `.keras` file of a `BertTextEmbedder` (or of a backbone: mean pooling), or
a SavedModel exported from one. The output is one JSON line per input line,
in order: `{"input": ..., "embedding": [...]}`, or `{"input": "", "error":
...}` for a blank line; with `--out FILE.npy`, one float32 row per line in a
`(num_lines, dim)` array (blank lines are an error there: every row must be an embedding).
"""

import json
import os
import sys

import numpy as np

from keras_bert.cli.errors import UserError
from keras_bert.cli.preflight import existing_file, local_model, model_reference
from keras_bert.cli.predict import _read_inputs, _shown

HELP = "sentence embeddings of raw text (JSON lines, or .npy with --out)"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"model": (None, local_model), "file": ("--file", existing_file), "tokenizer": ("--tokenizer", model_reference)}


def add_embed_arguments(parser):
    """Adds the `keras-bert embed` arguments to an argparse (sub)parser."""
    parser.add_argument(
        "model", help="a sentence-transformers or Hugging Face folder, a .keras embedder, or an exported SavedModel"
    )
    parser.add_argument("texts", nargs="*", help="texts to embed; default: --file or stdin")
    parser.add_argument("--file", help="a text file with one text per line ('-' for stdin)")
    parser.add_argument("--out", help="write a float32 .npy array (num_texts, dim) instead of JSON lines")
    parser.add_argument("--tokenizer", help=".keras models: vocab.txt or checkpoint folder (default: found beside it)")
    parser.add_argument("--sequence-length", type=int, help="tokens per text at most (default: the model's)")
    parser.add_argument("--pooling", choices=["mean", "cls", "max", "mean_sqrt_len_tokens"],
                        help="folders: override the pooling (default: the folder's, mean for plain BERT)")
    parser.add_argument("--normalize", action="store_true", default=None, help="L2-normalise the embeddings")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--full-input", action="store_true", help="echo every input whole in the JSON lines")


def _saved_model_embedder(args):
    """`embed(texts) -> (n, dim)` of an exported embedder SavedModel."""
    # defers TensorFlow (loads the SavedModel): `keras-bert --help` must not import it
    from keras_bert.export.runtime.exported_model import ExportedModel

    if args.pooling or args.normalize or args.sequence_length:
        raise UserError("--pooling, --normalize and --sequence-length are fixed in an exported SavedModel")
    served = ExportedModel(args.model)
    if served.task != "text_embedder":
        raise UserError(f"{args.model}: an exported {served.task}, not a text embedder; use `keras-bert predict`")

    def embed(texts):
        results = served.predict(texts, batch_size=args.batch_size)
        return np.asarray([r["embedding"] for r in results], "float32")

    return embed


def _pipeline(args):
    """The `TextEmbedderPipeline` of a folder or a .keras file."""
    # defers TensorFlow (the pipeline tokenizes with tensorflow-text) and keras: `keras-bert --help` must not import them
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer  # (deferred, as above)
    from keras_bert.models import BertBackbone, BertTextEmbedder  # (deferred, as above)
    from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline  # (deferred: tensorflow-text)

    options = {"sequence_length": args.sequence_length, "batch_size": args.batch_size}
    overrides = {k: v for k, v in (("pooling", args.pooling), ("normalize", args.normalize)) if v is not None}
    if os.path.isdir(args.model):
        return TextEmbedderPipeline.from_pretrained(args.model, **options, **overrides)
    files = find_model(args.model)
    tokenizer = load_tokenizer(files, args.tokenizer, flag="--tokenizer")
    model = load_keras_model(files)
    if isinstance(model, BertBackbone):
        model = BertTextEmbedder(model, **overrides)
    elif not isinstance(model, BertTextEmbedder):
        raise UserError(f"{files.path}: a {type(model).__name__}, not a BertTextEmbedder or a BertBackbone")
    elif overrides:
        raise UserError("--pooling and --normalize apply to folders and backbones; a .keras embedder keeps its own")
    return TextEmbedderPipeline(model, tokenizer, **options)


def run_embed(args):
    """Prints one JSON line per input line (or writes --out); returns the exit status (0)."""
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if args.out and not args.out.endswith(".npy"):
        raise UserError(f"--out {args.out}: expected a .npy file name")
    inputs = _read_inputs(args)
    blank = [where for where, line in inputs if not line.strip()]
    if args.out and blank:
        raise UserError(f"{blank[0]}: empty input (a blank line); --out needs an embedding for every line")
    if os.path.isfile(os.path.join(args.model, "saved_model.pb")):
        embed = _saved_model_embedder(args)
    else:
        embed = _pipeline(args)
    texts = [line for _, line in inputs if line.strip()]
    vectors = embed(texts) if texts else np.zeros((0, 0), "float32")
    if args.out:
        np.save(args.out, vectors)
        print(f"wrote {vectors.shape[0]} embeddings of dimension {vectors.shape[1]} to {args.out}", file=sys.stderr)
        return 0
    rows = iter(vectors)
    for where, line in inputs:
        record = {"input": _shown(line, args.full_input)}
        if line.strip():
            record["embedding"] = [float(v) for v in next(rows)]
        else:
            print(f"{where}: empty input (a blank line); its output line holds an \"error\"", file=sys.stderr)
            record["error"] = "empty input (a blank line): nothing to embed"
        print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0
