"""The GPU benchmark cases (`benchmarks/gpu.py`): each runs in one process on its KERAS_BACKEND and returns records.

A GPU runs kernels asynchronously, so every timed call here ends by waiting for
the device (`torch.cuda.synchronize()`, `jax.block_until_ready`), and every
implementation keeps its inputs and outputs on the device: no host copies in
the timed calls, for us or for the peers. The peers run in the same process and
the same rounds as ours (`common.time_interleaved`):

- forward: our `BertBackbone` with the weights of HF's `BertModel` (loaded with
  `BertBackbone.from_pretrained`, so the outputs can be compared), keras-hub's
  `BertBackbone` on this backend, and HF `BertModel` (torch eager, SDPA), each
  in fp32 and cast whole to bfloat16 and to float16; plus a matmul probe per
  precision on this backend (the "peak" that MFU is measured against).
- train: one `train_on_batch` of our `BertMaskedLM` and keras-hub's (the same
  AdamW, 20 predictions a row), under the fp32, mixed_bfloat16 and
  mixed_float16 policies, with dropout 0.1 and 0; on torch also our explicit
  attention-dropout path (the probabilities written out, as before the fused
  kernel took dropout); HF `BertForMaskedLM` (fp32, and autocast to bfloat16 /
  float16 with a GradScaler, torch's fused AdamW: HF's fastest eager setting).
"""

import contextlib
import copy
import os
import tempfile

import numpy as np

from benchmarks.cases import VOCAB, pretraining_batch, token_inputs, with_dtype
from benchmarks.common import forward_flops_per_token, log, pretraining_flops_per_token, record, time_interleaved
from benchmarks.peers import KERAS_HUB_MLM_METRIC

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}


def settings(quick):
    # (warm-up calls, timed rounds, minimum seconds per timed call)
    return (1, 1, 0.0) if quick else (2, 5, 0.25)


def forward_shapes(quick):
    return {"tiny": [(2, 16)]} if quick else {"base": [(64, 128), (16, 512)]}


def train_shape(quick):
    return ("tiny", 4, 32, 5) if quick else ("base", 32, 128, 20)


def backend_name():
    import keras

    return keras.backend.backend()


def device_name():
    """The device this process's Keras backend computes on ("cpu" without a GPU)."""
    if backend_name() == "jax":
        import jax

        device = jax.devices()[0]
        return "cpu" if device.platform == "cpu" else device.device_kind
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def torch_device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def synchronize():
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


# --- calls that keep everything on the device ------------------------------------------------------


def keras_forward_call(model, x):
    """A call running `model` (a Keras backbone) on the token-id dict `x`, inputs and outputs on the device."""
    import keras

    if backend_name() == "jax":
        import jax

        inputs = {k: jax.device_put(v) for k, v in x.items()}
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]

        @jax.jit
        def run(trainable, non_trainable, inputs):
            return model.stateless_call(trainable, non_trainable, inputs, training=False)[0]["sequence_output"]

        return lambda: jax.block_until_ready(run(trainable, non_trainable, inputs))
    import torch

    inputs = {k: keras.ops.convert_to_tensor(v) for k, v in x.items()}

    def call():
        with torch.no_grad():
            out = model(inputs, training=False)["sequence_output"]
        synchronize()
        return out

    return call


def hf_forward_call(model, x):
    import torch

    device = torch_device()
    inputs = dict(input_ids=torch.from_numpy(x["token_ids"]).to(device),
                  token_type_ids=torch.from_numpy(x["segment_ids"]).to(device),
                  attention_mask=torch.from_numpy(x["padding_mask"]).to(device))

    def call():
        with torch.inference_mode():
            out = model(**inputs).last_hidden_state
        synchronize()
        return out

    return call


def matmul_probe(dtype, n):
    """A call doing one n×n×n matmul in `dtype` on this backend's device, and its FLOPs."""
    if backend_name() == "jax":
        import jax
        import jax.numpy as jnp

        a = jax.random.normal(jax.random.key(0), (n, n), DTYPES[dtype])
        b = jax.random.normal(jax.random.key(1), (n, n), DTYPES[dtype])
        mm = jax.jit(jnp.matmul)
        return (lambda: jax.block_until_ready(mm(a, b))), 2 * n**3
    import torch

    a = torch.randn(n, n, device=torch_device()).to(getattr(torch, DTYPES[dtype]))
    b = torch.randn(n, n, device=torch_device()).to(getattr(torch, DTYPES[dtype]))

    def call():
        out = a @ b
        synchronize()
        return out

    return call, 2 * n**3


def to_numpy(out):
    if hasattr(out, "detach"):
        return out.detach().float().cpu().numpy()
    return np.asarray(out, "float32")


# --- forward ---------------------------------------------------------------------------------------


def hf_bert_model(size, folder):
    """HF `BertModel` of `size` (torch seed 0), saved to `folder` so our backbone can load the same weights."""
    import torch
    import transformers

    from benchmarks.cases import _hf_config

    torch.manual_seed(0)
    model = transformers.BertModel(_hf_config(size)).eval()  # SDPA: transformers 5 picks it by default
    model.save_pretrained(folder)
    return model


def forward(quick=False, shapes=None):
    """Backbone forward at fixed shapes, fp32 / bf16 / fp16: ours, keras-hub and HF, same rounds.

    `shapes`: [(batch, length), ...] at `base` instead of the default (64x128 and 16x512)."""
    import keras
    import keras_hub
    import torch

    from keras_bert import BertBackbone
    from keras_bert.models.bert_sizes import BERT_SIZES

    backend = backend_name()
    warmup, repeats, min_s = settings(quick)
    # XLA's CPU backend has no float16 matmul ("F16_F16_F32 is not supported by dot_general on CPU"):
    # only a --quick run without a GPU gets here, to check the machinery.
    dtypes = [d for d in DTYPES if not (d == "fp16" and backend == "jax" and device_name() == "cpu")]
    out = []
    plan = {"base": shapes} if shapes and not quick else forward_shapes(quick)
    for size, shapes in plan.items():
        with tempfile.TemporaryDirectory() as folder:
            hf_fp32 = hf_bert_model(size, folder)
            ours_fp32 = BertBackbone.from_pretrained(folder)
        hf = {"fp32": hf_fp32.to(torch_device())}
        ours = {"fp32": ours_fp32}
        hub = {}
        for dtype in dtypes:
            if dtype != "fp32":
                hf[dtype] = copy.deepcopy(hf_fp32).to(getattr(torch, DTYPES[dtype]))
                ours[dtype] = with_dtype(ours_fp32, DTYPES[dtype])
            keras.utils.set_random_seed(0)
            hub[dtype] = keras_hub.models.BertBackbone(vocabulary_size=VOCAB, max_sequence_length=512, dropout=0.0,
                                                       dtype=DTYPES[dtype], **BERT_SIZES[size])
        for batch, seq in shapes:
            log(f"  forward {backend} {size} {batch}x{seq}")
            x = token_inputs(batch, seq)
            fns, outputs = {}, {}
            for dtype in dtypes:
                fns[("keras_bert", dtype)] = keras_forward_call(ours[dtype], x)
                fns[("keras_hub", dtype)] = keras_forward_call(hub[dtype], x)
                fns[("hf_transformers", dtype)] = hf_forward_call(hf[dtype], x)
                fns[("matmul", dtype)], probe_flops = matmul_probe(dtype, 256 if quick else 4096)
            for dtype in dtypes:
                outputs[dtype] = to_numpy(fns[("keras_bert", dtype)]())
            reference = to_numpy(fns[("hf_transformers", "fp32")]())
            seconds = time_interleaved(fns, warmup, repeats, min_s)
            flops = forward_flops_per_token(size, seq)
            for (impl, dtype), secs in seconds.items():
                config = f"{size} {batch}x{seq} {dtype}"
                if impl == "matmul":
                    out.append(record("forward", "matmul", backend, config, "GFLOP/s", probe_flops / 1e9, secs))
                    continue
                extra = {}
                if impl == "keras_bert":
                    diff = outputs[dtype] - reference
                    extra = {"max_abs_diff_vs_hf_fp32": float(np.abs(diff).max()),
                             "rel_error_vs_hf_fp32": float(np.linalg.norm(diff) / np.linalg.norm(reference))}
                out.append(record("forward", impl, "torch" if impl == "hf_transformers" else backend, config,
                                  "tokens/s", batch * seq, secs, flops, **extra))
    return out


# --- training step ---------------------------------------------------------------------------------


@contextlib.contextmanager
def dtype_policy(name):
    import keras

    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


@contextlib.contextmanager
def explicit_attention_dropout():
    """Our attention as before the fused kernel took dropout: probabilities written out, then dropped."""
    import keras_bert.layers.self_attention as self_attention

    fuses = self_attention.attention_dropout_fuses
    self_attention.attention_dropout_fuses = lambda *args, **kwargs: False  # whatever the choice takes
    try:
        yield
    finally:
        self_attention.attention_dropout_fuses = fuses


def train_configs(backend, quick):
    """(impl, precision, dropout, variant) rows of the train case on this backend."""
    rows = [("keras_bert", "bf16", 0.1, ""), ("keras_bert", "bf16", 0.0, ""),
            ("keras_bert", "fp16", 0.1, ""), ("keras_bert", "fp32", 0.1, ""),
            ("keras_hub", "bf16", 0.1, ""), ("keras_hub", "fp32", 0.1, ""),
            ("hf_transformers", "bf16", 0.1, ""), ("hf_transformers", "bf16", 0.0, ""),
            ("hf_transformers", "fp16", 0.1, ""), ("hf_transformers", "fp32", 0.1, "")]
    if backend == "torch":
        # Our torch attention takes dropout inside the fused kernel; the explicit row is the path before it.
        rows = [(i, p, d, "fused" if i == "keras_bert" else v) for i, p, d, v in rows]
        rows.insert(1, ("keras_bert", "bf16", 0.1, "explicit"))
        # `compile(jit_compile=True)`: the compiled training step (CompiledTrainStep; inductor's Triton kernels on a
        # GPU). bf16 only: its first step compiles for a minute or more, and the budget is minutes.
        rows.insert(2, ("keras_bert", "bf16", 0.1, "compiled"))
    if backend == "jax" and not quick:
        # JAX compiles every model's train step (about 30 s each for base on an H200): bf16 rows only, so
        # the process stays inside a few minutes; the torch process has every precision.
        rows = [r for r in rows if r[1] == "bf16" and (r[2] == 0.1 or r[0] == "keras_bert")]
    return rows


def keras_train_call(impl, size, precision, dropout, x, y, w, losses, compiled=False):
    import keras

    from benchmarks.peers import keras_hub_masked_lm_step
    from keras_bert import BertBackbone, BertMaskedLM

    with dtype_policy(POLICIES[precision]):
        if impl == "keras_hub":
            return keras_hub_masked_lm_step(size, VOCAB, x, y, w, losses, dropout=dropout)
        keras.utils.set_random_seed(0)
        model = BertMaskedLM(BertBackbone.from_size(size, dropout=dropout))
        model.compile(jit_compile=True) if compiled else model.compile()

    def step():
        losses.append(float(model.train_on_batch(x, y, w, return_dict=True)["loss"]))

    return step


def hf_train_call(size, precision, dropout, x, y, losses):
    """One step of HF `BertForMaskedLM` (logits at every position, as it computes them), torch fused AdamW."""
    import torch
    import transformers

    from benchmarks.cases import _hf_config

    device = torch_device()
    torch.manual_seed(0)
    config = _hf_config(size)
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = dropout
    model = transformers.BertForMaskedLM(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=device.type == "cuda")
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "fp16")
    labels = np.full(x["token_ids"].shape, -100, "int64")
    np.put_along_axis(labels, x["mask_positions"], y, axis=1)
    inputs = dict(input_ids=torch.from_numpy(x["token_ids"]).long(), token_type_ids=torch.from_numpy(x["segment_ids"]).long(),
                  attention_mask=torch.from_numpy(x["padding_mask"]).long(), labels=torch.from_numpy(labels))
    inputs = {k: v.to(device) for k, v in inputs.items()}

    def step():
        with torch.autocast(device.type, dtype=getattr(torch, DTYPES[precision]), enabled=precision != "fp32"):
            loss = model(**inputs).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))  # waits for the device

    return step


def train(quick=False):
    """One masked-LM training step: ours, keras-hub's and HF's, per precision and dropout, same rounds."""
    backend = backend_name()
    size, batch, seq, preds = train_shape(quick)
    warmup, repeats, min_s = settings(quick)
    x, y, w = pretraining_batch(batch, seq, preds)
    y, w = y["mlm"], w["mlm"]
    fns, losses = {}, {}
    for row in train_configs(backend, quick):
        impl, precision, dropout, variant = row
        log(f"  train {backend} {impl} {precision} dropout {dropout} {variant}")
        losses[row] = []
        if impl == "hf_transformers":
            fns[row] = hf_train_call(size, precision, dropout, x, y, losses[row])
        else:
            step = keras_train_call(impl, size, precision, dropout, x, y, w, losses[row], compiled=variant == "compiled")
            if variant == "explicit":
                def step(step=step):
                    with explicit_attention_dropout():
                        step()
            fns[row] = step
    seconds = time_interleaved(fns, warmup, repeats, min_s)
    flops = pretraining_flops_per_token(size, seq, preds, VOCAB)  # counts the MLM head at the 20 positions only
    out = []
    for (impl, precision, dropout, variant), secs in seconds.items():
        loss = losses[(impl, precision, dropout, variant)]
        if not np.isfinite(loss[-1]):
            raise RuntimeError(f"{impl} {precision}: non-finite loss {loss[-1]}")
        attention = " compiled step" if variant == "compiled" else f" {variant} attention" if variant else ""
        extra = {"metric": KERAS_HUB_MLM_METRIC} if impl == "keras_hub" else {}
        out.append(record("train", impl, "torch" if impl == "hf_transformers" else backend,
                          f"{size} {batch}x{seq} MLM {precision} dropout {dropout:g}{attention}", "tokens/s",
                          batch * seq, secs, flops, examples_per_s=batch / min(secs), first_loss=loss[0],
                          last_loss=loss[-1], **extra))
    return out


def compiled_forward(quick=False):
    """bf16 forward without eager Python, same rounds (torch process only): HF's `BertModel` under `torch.compile`
    (default mode, and "reduce-overhead", which replays CUDA graphs), and our backbone traced by
    `TracedTorchModel` (torch.export: the Keras layers' Python runs once), alone and under the same two
    `torch.compile` modes, beside the eager calls of both; fp32 rows: ours eager and traced, beside HF eager fp32.

    `torch.compile` of the Keras model itself is not timed: its Keras layers recompile on Keras' `__setattr__`
    hook until dynamo's recompile limit (seen on CPU: 94 s to compile the tiny model); tracing first avoids that.
    Each record keeps `first_call_s`: tracing plus the first call (compilation), what a user waits once.
    """
    import time

    import torch

    from keras_bert import BertBackbone
    from keras_bert.export.torch_tracing.traced_torch_model import TracedTorchModel

    if backend_name() != "torch":
        return []
    warmup, repeats, min_s = settings(quick)
    size, shapes = next(iter(forward_shapes(quick).items()))
    batch, seq = shapes[0]
    with tempfile.TemporaryDirectory() as folder:
        hf_fp32 = hf_bert_model(size, folder)
        ours_fp32 = BertBackbone.from_pretrained(folder)
    ours = with_dtype(ours_fp32, "bfloat16")
    hf_fp32 = hf_fp32.to(torch_device())
    hf = copy.deepcopy(hf_fp32).to(torch.bfloat16)
    x = token_inputs(batch, seq)
    log(f"  compiled forward torch {size} {batch}x{seq} bf16")
    fns = {("keras_bert", "eager"): keras_forward_call(ours, x), ("hf_transformers", "eager"): hf_forward_call(hf, x),
           ("keras_bert", "fp32 eager"): keras_forward_call(ours_fp32, x),
           ("keras_bert", "fp32 traced"): traced_forward_call(TracedTorchModel(ours_fp32), x),
           ("hf_transformers", "fp32 eager"): hf_forward_call(hf_fp32, x)}
    first_call, outputs = {}, {}
    for mode in (None, "default", "reduce-overhead"):
        start = time.perf_counter()
        call = traced_forward_call(TracedTorchModel(ours, compile_mode=mode), x)
        name = "traced" + ("" if mode is None else f" torch.compile {mode}")
        outputs[name] = to_numpy(call())
        first_call[("keras_bert", name)] = time.perf_counter() - start
        fns[("keras_bert", name)] = call
        log(f"    keras_bert {name}: first call {first_call[('keras_bert', name)]:.1f} s")
    for mode in ("default", "reduce-overhead"):
        start = time.perf_counter()
        call = hf_forward_call(torch.compile(hf, mode=mode), x)
        call()
        first_call[("hf_transformers", f"torch.compile {mode}")] = time.perf_counter() - start
        fns[("hf_transformers", f"torch.compile {mode}")] = call
    eager = to_numpy(fns[("keras_bert", "eager")]())
    seconds = time_interleaved(fns, warmup + 1, repeats, min_s)
    flops = forward_flops_per_token(size, seq)
    out = []
    for (impl, mode), secs in seconds.items():
        extra = {"first_call_s": first_call[(impl, mode)]} if (impl, mode) in first_call else {}
        if impl == "keras_bert" and mode in outputs:
            extra["max_abs_diff_vs_our_eager"] = float(np.abs(outputs[mode] - eager).max())
        precision = "fp32" if mode.startswith("fp32") else "bf16"
        config = f"{size} {batch}x{seq} {precision} {mode.removeprefix('fp32 ')}"
        out.append(record("forward", impl, "torch", config, "tokens/s", batch * seq, secs, flops, **extra))
    return out


def traced_forward_call(traced, x):
    """A call running a `TracedTorchModel` on the token-id dict `x` (its input checks included), on the device."""
    import keras

    inputs = {k: keras.ops.convert_to_tensor(v) for k, v in x.items()}

    def call():
        out = traced(inputs)["sequence_output"]
        synchronize()
        return out

    return call


CASES = {"forward": forward, "train": train, "compiled": compiled_forward}


def environment():
    """The facts a GPU table needs beside it: device, versions, and the defaults that decide fp32 matmuls."""
    from importlib import metadata

    info = {"device": device_name(), "backend": backend_name()}
    for name in ("keras", "keras-hub", "jax", "jaxlib", "torch", "transformers", "numpy"):
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = "not installed"
    import torch

    info["torch_tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
    info["jax_default_matmul_precision"] = os.environ.get("JAX_DEFAULT_MATMUL_PRECISION", "default")
    return info
