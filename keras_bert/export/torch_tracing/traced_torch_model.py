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
and keeps only the torch ops it issued; this class removes the ops that do
nothing at run time (metadata asserts, casts to the dtype a tensor already
has, reshapes to the shape it has) and calls the graph directly. The
export's own shape asserts go too: the input checks below cover them. The graph holds the model's own parameters,
not copies: changing the Keras model's weights afterwards changes what the
graph computes (tested without `compile_mode`; with one, trace again).

Inputs are checked as the Keras model checks them (names, ranks, integer
dtype, id ranges, length) before the graph runs, so bad ids fail with the
same message and never reach an embedding kernel.
"""

import numpy as np

import keras

from keras_bert.export.batched_predict import predict_in_batches
from keras_bert.models.bert_task import inference_scope_of
from keras_bert.models.input_checks import check_inputs

# torch.compile modes worth naming; None = the exported graph alone (no compile time).
COMPILE_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# Ops torch.export records around Keras' `convert_to_tensor` that change nothing at run time.
_METADATA_ASSERTS = ("aten._assert_tensor_metadata.default", "aten._assert_scalar.default")
_CASTS = ("aten.to.dtype", "aten.to.dtype_layout", "aten._to_copy.default")
# Keras' Dense reshapes its kernel, its bias and its input to the shapes they already have.
_RESHAPES = ("aten.reshape.default", "aten.view.default")


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

    Raises:
        RuntimeError: the Keras backend is not torch.
        ValueError: an unknown `compile_mode`, or a model whose inputs are not
            a dict of integer tensors.
    """

    def __init__(self, model, compile_mode=None):
        if keras.backend.backend() != "torch":
            raise RuntimeError(
                f"TracedTorchModel traces with torch.export and needs KERAS_BACKEND=torch; this process runs "
                f"{keras.backend.backend()!r}. On JAX and TensorFlow, `predict_on_batch` already runs a "
                "compiled (XLA) step."
            )
        if compile_mode not in COMPILE_MODES:
            raise ValueError(f"compile_mode must be one of {list(COMPILE_MODES)}; received {compile_mode!r}")
        if not isinstance(model.input, dict):
            raise ValueError(
                f"TracedTorchModel takes models with a dict of named inputs; {model.name} has {model.input!r}"
            )
        self.model = model
        self.compile_mode = compile_mode
        self.input_ranks = {name: len(tensor.shape) for name, tensor in model.input.items()}
        backbone = getattr(model, "backbone", model)
        self.input_limits = backbone.input_limits
        # What the text pipelines read from a task model.
        self.backbone = backbone
        for name in ("num_classes", "label_names"):
            if hasattr(model, name):
                setattr(self, name, getattr(model, name))
        # Compiled graphs specialise per shape: rounding batch lengths up to 8 bounds how many they build.
        self.length_multiple = 1 if compile_mode is None else 8
        self.exported_program = self._export()
        # One graph, with the attention mask even when a batch has no padding. transformers drops an all-ones
        # mask so that torch may pick its flash kernel; a second graph without the mask measured no faster here
        # (H100, base 64x128 bf16, same process: 1.48M against 1.45M tokens/s, ranges overlapping) and 19% slower
        # under torch.compile "reduce-overhead" (1.76M against 2.16M;
        # benchmarks/results_cited/2026-11-26-1709-H100-torch-traced-attention-mask.json).
        self.graph_module = self._without_no_ops(self.exported_program.module())
        self._run = self.graph_module
        if compile_mode is not None:
            import torch  # defers torch: the class is importable on every backend

            self._run = torch.compile(self.graph_module, mode=compile_mode, dynamic=True)

    def __repr__(self):
        return f"TracedTorchModel({self.model.name!r}, compile_mode={self.compile_mode!r})"

    # --- tracing
    def _example_inputs(self):
        """Small int32 inputs of every named input: batch 2, length 8 (neither 0 nor 1, which export specialises)."""
        import torch  # defers torch: the class is importable on every backend

        length = min(8, self.input_limits["max_sequence_length"])
        shapes = {2: (2, length), 3: (2, 2, length)}
        examples = {}
        for name, rank in self.input_ranks.items():
            if rank not in shapes:
                raise ValueError(
                    f"input `{name}` of {self.model.name} has rank {rank}; TracedTorchModel takes rank 2 or 3"
                )
            size = (2, 3) if name == "mask_positions" else shapes[rank]
            fill = 1 if name == "padding_mask" else 0
            examples[name] = torch.full(size, fill, dtype=torch.int32, device=self._device())
        return examples

    def _dynamic_shapes(self):
        """Batch (and choices) free; length free up to max_sequence_length, shared by the token-level inputs."""
        from torch.export import Dim  # defers torch: the class is importable on every backend

        batch = Dim("batch", min=1, max=1 << 20)
        length = Dim("length", min=2, max=self.input_limits["max_sequence_length"])
        choices = Dim("choices", min=1, max=1 << 10)
        shapes = {}
        for name, rank in self.input_ranks.items():
            if name == "mask_positions":
                shapes[name] = {0: batch, 1: Dim("masks", min=1, max=self.input_limits["max_sequence_length"])}
            else:
                shapes[name] = {0: batch, 1: choices, 2: length} if rank == 3 else {0: batch, 1: length}
        return {"inputs": shapes}

    def _export(self):
        import torch  # defers torch: the class is importable on every backend

        model = self.model

        class Forward(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model  # a Keras layer is a torch Module on this backend: its parameters come along

            def forward(self, inputs):
                return model(inputs, training=False)

        with torch.no_grad(), inference_scope_of(model):  # traced in the scope the model's own predict runs in
            return torch.export.export(
                Forward(), (), kwargs={"inputs": self._example_inputs()}, dynamic_shapes=self._dynamic_shapes(),
                strict=False,
            )

    @staticmethod
    def _without_no_ops(graph_module):
        """`graph_module` without its metadata asserts, its casts of a tensor to the dtype and device it has,
        and its reshapes of a tensor to the shape it has."""
        graph = graph_module.graph
        for node in list(graph.nodes):
            if node.op != "call_function":
                continue
            target = str(node.target)
            if target in _METADATA_ASSERTS and not node.users:
                graph.erase_node(node)
            elif (target in _CASTS and _is_identity_cast(node)) or (target in _RESHAPES and _is_identity_reshape(node)):
                node.replace_all_uses_with(node.args[0])
                graph.erase_node(node)
        graph.eliminate_dead_code()
        graph_module.recompile()
        return graph_module

    def _device(self):
        for variable in self.model.weights:
            return variable.value.device
        raise ValueError(f"{self.model.name} has no weights: build it before tracing")

    # --- calling
    def __call__(self, inputs):
        """The model's outputs (torch tensors on the model's device), structured as the Keras model returns them."""
        import torch  # defers torch: the class is importable on every backend

        feed = self._checked(inputs)
        with torch.no_grad():
            return self._run(inputs=feed)

    def _checked(self, inputs):
        """`inputs` checked as the Keras model checks them, as int32 tensors on the model's device."""
        import torch  # defers torch: the class is importable on every backend

        if not isinstance(inputs, dict):
            raise ValueError(
                f"{self.model.name} takes a dict of {list(self.input_ranks)}; received {type(inputs).__name__}"
            )
        if hasattr(self.model, "drop_unused_features"):  # task models drop features their backbone does not take
            inputs = self.model.drop_unused_features(inputs)
        choices = any(rank == 3 for rank in self.input_ranks.values())
        check_inputs(inputs, self.input_limits, names=tuple(self.input_ranks), where=self.model.name, choices=choices)
        # check_inputs has checked the names, ranks, dtypes and ranges: what is left is placing them.
        device = self._device()
        return {
            name: torch.as_tensor(value if torch.is_tensor(value) else np.asarray(value), device=device).to(torch.int32)
            for name, value in inputs.items()
        }

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


def _is_identity_reshape(node):
    """True when the reshape `node` returns its input's shape (same sizes, written the same way).

    Sizes are compared as text: `s0` and `s0` are the same symbolic batch size, while
    asking whether two different symbols are equal would constrain the traced shapes.
    """
    source, result = node.args[0], node.meta.get("val")
    before = getattr(source, "meta", {}).get("val")
    if before is None or result is None or not hasattr(before, "shape"):
        return False
    return [str(d) for d in before.shape] == [str(d) for d in result.shape]


def _is_identity_cast(node):
    """True when the cast `node` returns a tensor of its input's dtype on its input's device (a no-op)."""
    source, result = node.args[0], node.meta.get("val")
    before = getattr(source, "meta", {}).get("val")
    if before is None or result is None or not hasattr(before, "dtype"):
        return False
    return before.dtype == result.dtype and before.device == result.device and node.kwargs.get("memory_format") is None
