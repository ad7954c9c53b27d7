"""CompiledTrainStep: a Keras model's training step on torch, traced once and compiled, called by `fit`.

    model.compile(jit_compile=True)     # a keras_bert task model on KERAS_BACKEND=torch
    model.fit(...)                      # each step: compiled forward + loss, autograd backward, fused AdamW

Why not Keras' own `jit_compile=True` on torch: it hands Keras' `train_step`
to `torch.compile`, whose bytecode tracer walks Keras' Python (layer calls,
dtype policies, variable hooks) and splits the step at what it cannot follow.
Measured (BertClassifier mini, 16x128, 2026-11-27): 125 s compiling, then
530 ms a step against 493 ms eager. Profiling the eager step (one thread,
2026-11-29) found, besides the matmuls: Keras' Python per layer, unfused
element-wise ops (dropout alone 80 ms a step), and the optimizer (144 ms of
`optimizer.apply` for 11M weights); and the matmuls themselves ran through
MKL, which on this AMD CPU reaches half of oneDNN's speed (`onednn_linear`).

What runs here instead:

1. `torch.export` in non-strict mode runs the model's forward and Keras' loss
   once, on fake tensors, inside a `keras.StatelessScope` that maps every
   variable to an input of the traced function: the graph is a pure function
   `(trainable, non-trainable, metric values, x, y, sample_weight) ->
   (loss, y_pred, changed state)`, of aten ops only. (Traced without the
   scope, export lifts the weights Keras reads as constants: no gradient.)
   A task model traces it in its `inference_scope` (`forward_scope`), which
   changes no output: a [CLS] classifier's last block runs at [CLS] only.
2. Dropout nodes become `rand >= p` (`random_ops`), float32 linear layers
   oneDNN's (`onednn_linear`, forward and backward), and inductor compiles
   the graph (`torch.compile`, C++ on CPU); autograd derives the backward.
3. The update runs fused (`FusedAdamWUpdate`) where the optimizer is a
   `BertAdamW` in its default form, else through Keras' own `optimizer.apply`
   (LAMB, loss scaling, EMA, any other optimizer): the gradients are the same.
4. Around it, the step does what Keras' torch `train_step` does: the loss
   tracker, `compute_metrics`, `optimizer.scale_loss`. Callbacks,
   checkpoints and `fit`'s loop are Keras' own; every weight and optimizer
   value lives in the Keras variables, updated in place.

A batch of a new shape (or dtype, or structure) gets its own graph; each is
exported and compiled once (about 1 s to export; 30-80 s to compile mini or
base on 2 busy cores, seconds when inductor's cache has the graph). Where
tracing or compiling fails, the model trains eagerly from then on, with a
warning that says why (`fallback_reason`).
"""

import contextlib
import os
import traceback
import warnings

import keras

from keras_bert.torch_training.fused_adamw_update import FusedAdamWUpdate
from keras_bert.torch_training.onednn_linear import rewrite_linears
from keras_bert.torch_training.random_ops import rewrite_random_ops

# The `torch.compile` backend. "inductor" generates C++ (CPU) or Triton (GPU) kernels; the tests of the
# machinery around it use "aot_eager" (the same export, rewrite and autograd graphs, run op by op), which
# compiles a tiny model in seconds where inductor's C++ takes tens of seconds on two cores.
COMPILER = "inductor"
# inductor options: `fallback_random` keeps `aten.rand` (see random_ops) instead of inductor's own generator.
INDUCTOR_OPTIONS = {"fallback_random": True}


class CompiledTrainStep:
    """The train function `fit` calls (`model.train_function`): one compiled step per batch.

    Args:
        model: a compiled Keras model on the torch backend (a keras_bert task model).
        check_batch: optional callable run on each batch's `x` before the graph
            (the value checks a model's eager call makes: ids inside the vocabulary, ...).
        forward_scope: optional callable returning a context manager the forward
            is traced in; one that changes no output of the model (a task model's
            `inference_scope`, which computes the last block at [CLS] only when
            nothing else is read) leaves every loss and gradient as they are.
        onednn_linears: run float32 linear layers on a CPU through oneDNN
            (`onednn_linear`: about twice MKL's speed on AMD CPUs); False keeps torch's `aten.linear`.

    Attributes:
        fallback_reason: None while steps run compiled; else why the model trains eagerly.
        update: `FusedAdamWUpdate`, or Keras' `optimizer.apply` (see `update_reason`).
        update_reason: why the update is not fused (None when it is).
        graphs: {input signature: compiled graph}, one per batch shape seen.
    """

    def __init__(self, model, check_batch=None, forward_scope=None, onednn_linears=True):
        self.model = model
        self.check_batch = check_batch
        self.forward_scope = forward_scope or contextlib.nullcontext
        self.onednn_linears = onednn_linears
        self.fallback_reason = self._unsupported_reason()
        self.graphs = {}
        self.update = None
        self.update_reason = None
        if self.fallback_reason is not None:
            self._warn()

    def _unsupported_reason(self):
        model = self.model
        if keras.backend.backend() != "torch":
            return f"the backend is {keras.backend.backend()!r}, not torch"
        if keras.distribution.distribution() is not None:
            return "a keras.distribution is set"
        if getattr(model, "optimizer", None) is None:
            return "the model is not compiled"
        return None

    def _warn(self):
        warnings.warn(
            f"{self.model.name}: the compiled torch train step does not apply ({self.fallback_reason}); "
            "training eagerly, as with jit_compile=False.",
            stacklevel=3,
        )

    # --- the train function
    def __call__(self, data):
        """One step on `data` (`[batch]`, as Keras' torch `fit` passes it); returns the logs."""
        batch = data[0]
        if self.fallback_reason is not None:
            return self.model.train_step(batch)
        from keras.src.trainers.data_adapters import data_adapter_utils  # deferred: Keras' own unpacking

        # `train_on_batch` passes numpy arrays through; export takes tensors.
        x, y, sample_weight = keras.tree.map_structure(
            lambda value: value if value is None else keras.ops.convert_to_tensor(value),
            data_adapter_utils.unpack_x_y_sample_weight(batch),
        )
        if self.check_batch is not None:
            self.check_batch(x)
        key = self._signature(x, y, sample_weight)
        first = key not in self.graphs
        try:
            if first:
                self.graphs[key] = self._trace(x, y, sample_weight)
            # inductor compiles the forward graph at its first call and the backward at its first backward.
            outputs = self._forward_and_backward(self.graphs[key], x, y, sample_weight)
        except Exception as error:
            if not first:
                raise
            # Anything export or the compiler cannot take: train eagerly, and say why. Nothing has been
            # assigned yet, so the eager step starts from the same state.
            self.graphs.pop(key, None)
            return self._fall_back(error, batch)
        return self._finish(self.graphs[key], x, y, sample_weight, *outputs)

    def _fall_back(self, error, batch):
        self.fallback_reason = _describe(error)
        self._warn()
        return self.model.train_step(batch)

    def _signature(self, x, y, sample_weight):
        """What a graph is specialised to: the batch's structure, shapes and dtypes, and the trainable variables."""
        batch = keras.tree.map_structure(
            lambda t: None if t is None else (tuple(t.shape), str(t.dtype)), (x, y, sample_weight)
        )
        return repr(batch), tuple(id(v) for v in self.model.trainable_variables)

    # --- tracing and compiling
    def _trace(self, x, y, sample_weight):
        """The compiled graph of forward + loss for batches shaped like `(x, y, sample_weight)`."""
        import torch  # deferred: the torch backend's own module

        model = self.model
        trainable = list(model.trainable_variables)
        state = list(model.non_trainable_variables)
        metrics = list(model.metrics_variables)
        forward_scope = self.forward_scope
        changed = {}

        class Step(torch.nn.Module):  # holds no parameters: every variable comes in as an input
            def forward(self, trainable_values, state_values, metric_values, x, y, sample_weight):
                mapping = [*zip(trainable, trainable_values), *zip(state, state_values), *zip(metrics, metric_values)]
                with keras.StatelessScope(state_mapping=mapping) as scope, forward_scope():
                    y_pred = model(x, training=True)
                    loss = model._compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True)
                # Only what the step assigned comes back (seed states, CompileLoss' per-output loss trackers):
                # returning every input unchanged would copy each frozen weight every step.
                olds = state_values + metric_values
                new = [(v, scope.get_current_value(v), old) for v, old in zip(state + metrics, olds)]
                changed["variables"] = [v for v, value, old in new if value is not old]
                return loss, y_pred, [value for _, value, old in new if value is not old]

        values = ([v.value for v in trainable], [v.value for v in state], [v.value for v in metrics])
        exported = torch.export.export(Step(), (*values, x, y, sample_weight), strict=False)
        graph_module = exported.module()
        rewrites = {"dropout": rewrite_random_ops(graph_module),
                    "onednn_linear": rewrite_linears(graph_module) if self.onednn_linears else 0}
        options = {"options": INDUCTOR_OPTIONS} if COMPILER == "inductor" else {}
        compiled = torch.compile(graph_module, backend=COMPILER, dynamic=False, **options)
        return {"run": compiled, "variables": trainable, "state": state, "metrics": metrics,
                "changed": changed["variables"], "rewrites": rewrites}

    # --- one step: Keras' torch `train_step`, with the compiled forward and loss and the update of `_updater`
    def _forward_and_backward(self, graph, x, y, sample_weight):
        """`(loss, y_pred, changed state values, gradients)`; changes nothing."""
        import torch  # deferred: the torch backend's own module

        model = self.model
        weights = [v.value for v in graph["variables"]]
        # The variables in the order the graph was traced with.
        state, metrics = [v.value for v in graph["state"]], [v.value for v in graph["metrics"]]
        loss, y_pred, changed = graph["run"](weights, state, metrics, x, y, sample_weight)
        grads = None
        if weights:
            grads = torch.autograd.grad(model.optimizer.scale_loss(loss), weights, allow_unused=True)
        return loss, y_pred, changed, grads

    def _finish(self, graph, x, y, sample_weight, loss, y_pred, changed, grads):
        """Assigns the state the forward changed, updates the weights, and returns the metrics' logs."""
        import torch  # deferred: the torch backend's own module

        model = self.model
        with torch.no_grad():
            for variable, value in zip(graph["changed"], changed):
                variable.assign(value)
        model._loss_tracker.update_state(
            loss.detach(), sample_weight=next(i for i in keras.tree.flatten(x) if i is not None).shape[0]
        )
        if grads is None:
            warnings.warn("The model does not have any trainable weights.")
        else:
            self._updater(graph["variables"])(grads)
        return model.compute_metrics(x, y, keras.tree.map_structure(lambda t: t.detach(), y_pred), sample_weight)

    def _updater(self, trainable):
        if self.update is None or [id(v) for v in self.update.variables] != [id(v) for v in trainable]:
            optimizer = self.model.optimizer
            self.update_reason = FusedAdamWUpdate.unsupported_reason(optimizer, trainable)
            fused = FusedAdamWUpdate.for_optimizer(optimizer, trainable)
            self.update = fused if fused is not None else _KerasUpdate(optimizer, trainable)
        return self.update

    def __repr__(self):
        state = "compiled" if self.fallback_reason is None else f"eager ({self.fallback_reason})"
        return f"CompiledTrainStep({self.model.name!r}, {state}, {len(self.graphs)} graph(s), update={self.update!r})"


class _KerasUpdate:
    """Keras' own `optimizer.apply`, with the variables it was chosen for (see `CompiledTrainStep._updater`)."""

    def __init__(self, optimizer, variables):
        self.optimizer = optimizer
        self.variables = list(variables)

    def __call__(self, grads):
        import torch  # deferred: the torch backend's own module

        with torch.no_grad():  # as Keras' torch train_step applies it
            self.optimizer.apply(list(grads), self.variables)

    def __repr__(self):
        return "Keras optimizer.apply"


def _describe(error):
    """`error` in one line: the innermost error's type and first line, and the deepest frame outside torch.

    torch.export re-raises what went wrong with only a note ("The error above occurred when calling
    torch.export.export"); the cause is the error it was raised from, and the place is the model's code.
    """
    inner = error
    while str(inner).strip().startswith("The error above") and (inner.__cause__ or inner.__context__) is not None:
        inner = inner.__cause__ or inner.__context__
    lines = str(inner).strip().splitlines()
    text = f"{type(inner).__name__}: {lines[0] if lines else ''}"
    torch_dir = os.sep + "torch" + os.sep
    frames = [f for f in traceback.extract_tb(inner.__traceback__) if torch_dir not in f.filename]
    if frames:
        text += f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})"
    return text
