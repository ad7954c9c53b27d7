"""Torch tracing: `TracedTorchModel`, a Keras model on the torch backend as one `torch.export` graph.

Nothing is written to disk: the graph runs in the process that traced it,
where the text pipelines take it in place of the Keras model.
"""
