"""Calls exported SavedModels the way a serving process does: TensorFlow only.

Run by the export tests with keras, keras_hub and keras_bert hidden from the
import path (see `conftest.run_with_packages_hidden`). tensorflow_text's
Python package needs keras, so the tokenizer's custom ops are loaded from its
op libraries directly, as a TF Serving build links them in.

Input: the JSON file named by $SERVE_SPEC, a list of calls
`{"directory", "signature", "inputs": {name: nested list}, "dtypes": {name: "string"|"int32"}}`.
Output: $SERVE_OUT (.npz) with one array per `"<call index>/<output name>"`,
and `"<call index>/error"` for a call that raised (its first line).
"""

import glob
import importlib.util
import json
import os
import sys

import numpy as np
import tensorflow as tf

forbidden = sorted(name for name in sys.modules if name.split(".")[0] in ("keras", "keras_bert", "keras_hub"))
assert not forbidden, f"imported {forbidden}"
ops_dir = os.path.join(os.path.dirname(importlib.util.find_spec("tensorflow_text").origin), "python", "ops")
for library in sorted(glob.glob(os.path.join(ops_dir, "*.so"))):
    tf.load_op_library(library)

with open(os.environ["SERVE_SPEC"], encoding="utf-8") as f:
    calls = json.load(f)
loaded, results = {}, {}
for index, call in enumerate(calls):
    if call["directory"] not in loaded:
        loaded[call["directory"]] = tf.saved_model.load(call["directory"])
    signature = loaded[call["directory"]].signatures[call["signature"]]
    inputs = {}
    for name, value in call["inputs"].items():
        dtype = call.get("dtypes", {}).get(name, "string")
        if dtype == "string":
            value = np.array([v.encode("utf-8", "surrogateescape") if isinstance(v, str) else [
                w.encode("utf-8", "surrogateescape") for w in v] for v in value], dtype=object)
            if value.size == 0:
                value = np.zeros((0,) * max(1, call.get("rank", {}).get(name, 1)), dtype=object)
        inputs[name] = tf.constant(value, dtype=getattr(tf, dtype))
    try:
        outputs = signature(**inputs)
    except Exception as error:  # recorded, and the process goes on serving the next call
        results[f"{index}/error"] = np.array(f"{type(error).__name__}: {error}")
        continue
    for name, value in outputs.items():
        results[f"{index}/{name}"] = value.numpy()
assert not [n for n in sys.modules if n.split(".")[0] in ("keras", "keras_bert", "keras_hub")]
np.savez(os.environ["SERVE_OUT"], **results)
print("served", len(calls), "calls")
