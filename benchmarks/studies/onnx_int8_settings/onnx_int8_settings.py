"""Which dynamic-int8 settings keep the fine-tuned MiniLM classifier within 0.5 point of fp32?

Fine-tunes all-MiniLM-L6-v2 on the movie-review split (the recipe of benchmarks/studies/onnx_export/onnx_export.py, kept
in WORK/run and reused), exports it to ONNX fp32, quantizes that file with each `quantize_dynamic`
setting below and scores each on the 1,054 held-out sentences through `ExportedModel`. Accuracy only.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/onnx_int8_settings/onnx_int8_settings.py [WORK]
"""
import argparse, json, os, shutil, sys
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the checkout
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from benchmarks.finetune_sentiment import read_split
from benchmarks.studies.onnx_export.onnx_export import _finetune, _accuracy
from keras_bert.export import ExportedModel, export_onnx
from keras_bert.pipelines.loading import load_pipeline
from onnxruntime.quantization import QuantType, quantize_dynamic
import onnx

work = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".cache", "int8_settings")
os.makedirs(work, exist_ok=True)
train, heldout, _ = read_split()
texts = [t for t, _ in heldout]
args = argparse.Namespace(init="minilm", learning_rate=None, sequence_length=64, epochs=2, batch_size=32, quiet=True)
run = os.path.join(work, "run")
if not os.path.exists(os.path.join(run, "model.keras")):
    run = _finetune(args, work, train, heldout)
pipe = load_pipeline(run, sequence_length=64, batch_size=32)
print("keras", round(_accuracy(pipe(texts), heldout), 4), flush=True)
base = os.path.join(work, "onnx")
if not os.path.exists(base):
    export_onnx(pipe.model, base, pipe.tokenizer, quantize="int8", sequence_length=64)
graph = onnx.load(os.path.join(base, "model.onnx"))
matmuls = [n.name for n in graph.graph.node if n.op_type in ("MatMul", "Gemm")]
print(len(matmuls), "matmuls; first", matmuls[:3], "last", matmuls[-3:], flush=True)
variants = {
    "per_tensor": dict(),
    "per_channel": dict(per_channel=True),
    "per_channel_reduce_range": dict(per_channel=True, reduce_range=True),
    "per_tensor_head_fp32": dict(nodes_to_exclude=matmuls[-2:]),
    "per_channel_head_fp32": dict(per_channel=True, nodes_to_exclude=matmuls[-2:]),
}
results = {}
for name, options in variants.items():
    target = os.path.join(work, f"onnx_{name}")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(base, target)
    quantize_dynamic(os.path.join(base, "model.onnx"), os.path.join(target, "model.int8.onnx"), weight_type=QuantType.QInt8, **options)
    served = ExportedModel(target, precision="int8", tokenizer=pipe.tokenizer)
    results[name] = round(_accuracy(served.predict(texts, batch_size=32), heldout), 4)
    print(name, results[name], flush=True)
json.dump(results, open(os.path.join(work, "results.json"), "w"), indent=2)
