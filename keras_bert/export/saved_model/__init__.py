"""TF SavedModels: the serving export (raw strings in, a task's answers out) and TF Hub-style encoder + preprocessor.

- `saved_model_export.py`: `export_saved_model`, `read_metadata`;
  `serving_options.py`: `ServingOptions`, what `serve_text` is fixed with;
  `serving_module.py`: `BertServingModule`, the `tf.Module` that is saved.
- `hub_export.py`: `export_hub_encoder`; `hub_encoder_module.py` and
  `hub_preprocessor_module.py`: the two `tf.Module`s it saves.
- `trainable_tfsm_layer.py`: `TrainableTFSMLayer`, Keras' `TFSMLayer` that
  Adam-style optimizers can train (on the TF Hub-style encoder).

The modules that build graphs import TensorFlow; the `export_*` functions
do not until they write (on JAX or torch, in the TensorFlow worker).
"""
