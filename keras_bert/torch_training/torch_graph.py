"""TorchGraph: a Keras model on the torch backend traced once into a graph of torch ops (dynamic batch and length).

The tracing core of `keras_bert.export.TracedTorchModel` (the public,
input-checking model for inference) and of `CompiledForward` (what
`predict` and `evaluate` run with `jit_compile=True`). Why a graph: on the
torch backend Keras runs every layer call through its own Python; see
`TracedTorchModel`. `torch.export` in non-strict mode runs that Python once,
on fake tensors, and keeps only the torch ops it issued; the ops that do
nothing at run time (metadata asserts, casts to the dtype a tensor already
has, reshapes to the shape it has) are removed, and the export's own shape
asserts go too: the callers check inputs as the Keras model does. The graph
holds the model's own parameters, not copies: changing the Keras model's
weights afterwards changes what the graph computes (compiled by inductor
too: tests/torch_training/test_compiled_forward.py).
"""

import contextlib

import numpy as np

# torch.compile modes worth naming; None = the exported graph alone (no compile time).
COMPILE_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# Ops torch.export records around Keras' `convert_to_tensor` that change nothing at run time.
_METADATA_ASSERTS = ("aten._assert_tensor_metadata.default", "aten._assert_scalar.default")
_CASTS = ("aten.to.dtype", "aten.to.dtype_layout", "aten._to_copy.default")
# Keras' Dense reshapes its kernel, its bias and its input to the shapes they already have.
_RESHAPES = ("aten.reshape.default", "aten.view.default")




class TorchGraph:
    """`model`'s `training=False` forward as one torch graph, called with a dict of integer inputs.

    Args:
        model: a built keras_bert model (backbone or task) whose inputs are a
            dict of integer tensors of rank 2 (rank 3 with a choices axis),
            traced in its `inference_scope` where it has one.
        compile_mode: None: run the exported graph as it is; or a
            `torch.compile` mode (see `TracedTorchModel`).
        onednn_linears: run float32 linear layers on a CPU through oneDNN
            (`onednn_linear`: about twice MKL's speed on AMD CPUs).
    """

    def __init__(self, model, compile_mode=None, onednn_linears=False):
        if compile_mode not in COMPILE_MODES:
            raise ValueError(f"compile_mode must be one of {list(COMPILE_MODES)}; received {compile_mode!r}")
        if not isinstance(model.input, dict):
            raise ValueError(
                f"TracedTorchModel takes models with a dict of named inputs; {model.name} has {model.input!r}"
            )
        self.model = model
        self.compile_mode = compile_mode
        self.input_ranks = {name: len(tensor.shape) for name, tensor in model.input.items()}
        self.input_limits = getattr(model, "backbone", model).input_limits
        self.exported_program = self._export()
        # One graph, with the attention mask even when a batch has no padding. transformers drops an all-ones
        # mask so that torch may pick its flash kernel; a second graph without the mask measured no faster here
        # (H100, base 64x128 bf16, same process: 1.48M against 1.45M tokens/s, ranges overlapping) and 19% slower
        # under torch.compile "reduce-overhead" (1.76M against 2.16M;
        # benchmarks/results_cited/2026-11-26-1709-H100-torch-traced-attention-mask.json).
        self.graph_module = self._without_no_ops(self.exported_program.module())
        if onednn_linears:
            from keras_bert.torch_training.onednn_linear import rewrite_linears  # deferred: torch's own op library

            rewrite_linears(self.graph_module)
        self._run = self.graph_module
        if compile_mode is not None:
            import torch  # defers torch: the class is importable on every backend

            self._run = torch.compile(self.graph_module, mode=compile_mode, dynamic=True)

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

        # Traced in the scope the model's own predict runs in (a task model's; a backbone has none).
        scope = getattr(model, "inference_scope", contextlib.nullcontext)
        with torch.no_grad(), scope():
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

    def __call__(self, inputs):
        """The outputs (torch tensors on the model's device) on `inputs`, a dict of checked integer arrays or tensors."""
        import torch  # defers torch: the class is importable on every backend

        device = self._device()
        feed = {
            name: torch.as_tensor(value if torch.is_tensor(value) else np.asarray(value), device=device).to(torch.int32)
            for name, value in inputs.items()
        }
        with torch.no_grad():
            return self._run(inputs=feed)


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
