"""TracedTorchModel: a Keras model on the torch backend, traced once into a graph of torch ops, called without Keras.

    fast = TracedTorchModel(classifier)                      # torch.export, dynamic batch and length
    fast.predict_on_batch({"token_ids": ..., "segment_ids": ..., "padding_mask": ...})  # numpy, as Keras returns
    fast = TracedTorchModel(classifier, compile_mode="reduce-overhead")   # + torch.compile (CUDA graphs on a GPU)
    TextClassifierPipeline(fast, tokenizer)                  # the pipelines take it like the Keras model

Why: on the torch backend Keras runs every layer call through its own Python
(argument parsing, dtype policies, autocast scopes, `convert_to_tensor`), and
on a GPU that Python, not the GPU, sets the pace: a base forward at 64x128
took 29 ms in bf16 against 7.7 ms for Hugging Face's eager `BertModel`
(benchmarks/RESULTS.md, GPU section). `torch.compile` of the Keras model
itself recompiles on Keras' attribute hooks until dynamo gives up.
`torch.export` in non-strict mode runs that Python once, on fake tensors,
and keeps only the torch ops it issued (`keras_bert.torch_training.TorchGraph`,
which `predict` and `evaluate` also run with `jit_compile=True`); the graph
is called directly. The graph holds the model's own parameters, not copies:
changing the Keras model's weights afterwards changes what the graph computes.

Inputs are checked as the Keras model checks them (names, ranks, integer
dtype, id ranges, length) before the graph runs, so bad ids fail with the
same message and never reach an embedding kernel.
"""

import keras

from keras_bert.export.batched_predict import predict_in_batches
from keras_bert.models.input_checks import check_inputs
from keras_bert.torch_training.torch_graph import TorchGraph


class TracedTorchModel:
    """`model` (a keras_bert backbone or task model, torch backend) as one torch graph, called like the model.

    Args:
        model: a built keras_bert model whose inputs are a dict of integer
            tensors (`token_ids`, `segment_ids`, `padding_mask`, and
            `mask_positions` for masked-LM models), rank 2, or rank 3 with a
            choices axis for multiple choice.
        compile_mode: None (default): run the exported graph as it is; or a
            `torch.compile` mode ("default", "reduce-overhead", ...). The first
            call at each new shape compiles (on an H100, base 64x128: 13-22 s
            for tracing plus the first call, against 5-6 s traced alone).
        onednn_linears: run float32 linear layers on a CPU through oneDNN
            (`keras_bert.torch_training.onednn_linear`: about twice MKL's
            speed on AMD CPUs); False keeps torch's `aten.linear`.

    Raises:
        RuntimeError: the Keras backend is not torch.
        ValueError: an unknown `compile_mode`, or a model whose inputs are not
            a dict of integer tensors.
    """

    def __init__(self, model, compile_mode=None, onednn_linears=False):
        if keras.backend.backend() != "torch":
            raise RuntimeError(
                f"TracedTorchModel traces with torch.export and needs KERAS_BACKEND=torch; this process runs "
                f"{keras.backend.backend()!r}. On JAX and TensorFlow, `predict_on_batch` already runs a "
                "compiled (XLA) step."
            )
        self.graph = TorchGraph(model, compile_mode, onednn_linears)
        self.model = model
        self.compile_mode = compile_mode
        self.exported_program, self.graph_module = self.graph.exported_program, self.graph.graph_module
        self.input_ranks, self.input_limits = self.graph.input_ranks, self.graph.input_limits
        # What the text pipelines read from a task model.
        self.backbone = getattr(model, "backbone", model)
        for name in ("num_classes", "label_names"):
            if hasattr(model, name):
                setattr(self, name, getattr(model, name))
        # Compiled graphs specialise per shape: rounding batch lengths up to 8 bounds how many they build.
        self.length_multiple = 1 if compile_mode is None else 8

    def __repr__(self):
        return f"TracedTorchModel({self.model.name!r}, compile_mode={self.compile_mode!r})"

    # --- calling
    def __call__(self, inputs):
        """The model's outputs (torch tensors on the model's device), structured as the Keras model returns them."""
        return self.graph(self._checked(inputs))

    def _checked(self, inputs):
        """`inputs` checked as the Keras model checks them (names, ranks, integer dtype, id ranges, length)."""
        if not isinstance(inputs, dict):
            raise ValueError(
                f"{self.model.name} takes a dict of {list(self.input_ranks)}; received {type(inputs).__name__}"
            )
        if hasattr(self.model, "drop_unused_features"):  # task models drop features their backbone does not take
            inputs = self.model.drop_unused_features(inputs)
        choices = any(rank == 3 for rank in self.input_ranks.values())
        check_inputs(inputs, self.input_limits, names=tuple(self.input_ranks), where=self.model.name, choices=choices)
        return inputs

    def predict_on_batch(self, inputs):
        """The outputs as numpy arrays, structured as `keras.Model.predict_on_batch` returns them."""
        import torch  # defers torch: the class is importable on every backend

        # numpy has no bfloat16: those come back as float32, as Keras' own `predict_on_batch` returns them.
        return keras.tree.map_structure(
            lambda t: (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy(), self(inputs)
        )

    def predict(self, inputs, batch_size=32, verbose=0):
        """`predict_on_batch` over batches of `batch_size` rows, concatenated (`verbose` is ignored)."""
        return predict_in_batches(self.predict_on_batch, inputs, batch_size)
