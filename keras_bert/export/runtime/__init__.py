"""The runtime that runs any export: raw strings in, the pipelines' answers out.

- `exported_model.py`: `ExportedModel`, a SavedModel (its `serve_text`),
  or an ONNX / LiteRT export behind its task's Python pipeline.
- `runtime_model.py`: `RuntimeModel`, an ONNX / LiteRT graph called like
  the Keras model it came from.
- `int8_check.py`: `check_int8_accuracy`, a classifier's held-out accuracy
  through its fp32 and int8 ONNX graphs.
"""
