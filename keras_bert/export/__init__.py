"""Export to a TensorFlow SavedModel with the tokenizer inside, and use exported models.

`export_saved_model` writes the SavedModel; `ExportedModel` loads one and
predicts on raw strings (what `keras-bert predict` uses).
"""

from keras_bert.export.exported_model import ExportedModel
from keras_bert.export.saved_model_export import export_saved_model, read_metadata

__all__ = ["ExportedModel", "export_saved_model", "read_metadata"]
