"""Benchmarks: throughput of keras_bert against Hugging Face transformers and keras-hub, in one run (`make bench`)."""
