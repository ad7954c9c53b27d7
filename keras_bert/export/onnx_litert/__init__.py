"""ONNX and LiteRT: a model's token-id graph for ONNX Runtime or the LiteRT interpreter, its tokenizer beside it.

- `onnx_litert_export.py`: `export_onnx`, `export_litert`, and reading such
  an export's metadata (`runtime_format`, `read_runtime_metadata`).
- `graph_conversion.py`: the TensorFlow graph of the model converted with
  tf2onnx or TFLiteConverter; dynamic int8 quantization of the ONNX file.
- `onnx_rewrites.py`: exact rewrites of tf2onnx's output into the nodes
  onnxruntime fuses (layer norm, GELU, MatMul for int8).

`keras_bert.export.runtime` runs what these write.
"""
