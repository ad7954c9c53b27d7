"""Old module paths of keras_bert that still import, with a DeprecationWarning naming the new path.

When a module moves, its old dotted path goes into `MOVED_MODULES`; `import
keras_bert.old.path` (or `from keras_bert.old.path import name`) then gives
the new module itself, so every name in it, and says once where it went. The
finder is installed by `keras_bert/__init__.py`; it never imports anything
until an old path is asked for.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

# old dotted path -> new dotted path
MOVED_MODULES = {
    "keras_bert.layers._utils": "keras_bert.layers.arguments",
    "keras_bert.tasks": "keras_bert.task_registry",
    "keras_bert.jobs.finetune_tasks": "keras_bert.jobs.finetune_handlers",
    "keras_bert.preprocessing.tasks": "keras_bert.preprocessing.task_data",
    "keras_bert.preprocessing.tasks.classification_data": "keras_bert.preprocessing.task_data.classification_data",
    "keras_bert.preprocessing.tasks.multiple_choice_data": "keras_bert.preprocessing.task_data.multiple_choice_data",
    "keras_bert.preprocessing.tasks.ner_data": "keras_bert.preprocessing.task_data.ner_data",
    "keras_bert.preprocessing.tasks.packing_preprocessor": "keras_bert.preprocessing.task_data.packing_preprocessor",
    "keras_bert.preprocessing.tasks.squad_data": "keras_bert.preprocessing.task_data.squad_data",
    "keras_bert.preprocessing.tasks.task_features": "keras_bert.preprocessing.task_data.task_features",
    "keras_bert.converters.json_files": "keras_bert.json_files",
    "keras_bert.export.export_worker": "keras_bert.export.tensorflow_worker.__main__",
    "keras_bert.export.saved_model_export": "keras_bert.export.saved_model.saved_model_export",
    "keras_bert.export.serving_module": "keras_bert.export.saved_model.serving_module",
    "keras_bert.export.hub_export": "keras_bert.export.saved_model.hub_export",
    "keras_bert.export.hub_encoder_module": "keras_bert.export.saved_model.hub_encoder_module",
    "keras_bert.export.hub_preprocessor_module": "keras_bert.export.saved_model.hub_preprocessor_module",
    "keras_bert.export.trainable_tfsm_layer": "keras_bert.export.saved_model.trainable_tfsm_layer",
    "keras_bert.export.runtime_export": "keras_bert.export.onnx_litert.onnx_litert_export",
    "keras_bert.export.graph_conversion": "keras_bert.export.onnx_litert.graph_conversion",
    "keras_bert.export.onnx_rewrites": "keras_bert.export.onnx_litert.onnx_rewrites",
    "keras_bert.export.traced_torch_model": "keras_bert.export.torch_tracing.traced_torch_model",
    "keras_bert.export.exported_model": "keras_bert.export.runtime.exported_model",
    "keras_bert.export.runtime_model": "keras_bert.export.runtime.runtime_model",
    "keras_bert.export.int8_check": "keras_bert.export.runtime.int8_check",
    "keras_bert.jobs.initial_backbone": "keras_bert.loading.initial_backbone",
    "keras_bert.cli.model_files": "keras_bert.loading.model_files",
    "keras_bert.export.text_windows": "keras_bert.postprocessing.text_windows",
    "keras_bert.export.embedder_outputs": "keras_bert.export.task_outputs",
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, new_name):
        self.new_name = new_name

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {self.new_name}; import it from there (the old path will be removed).",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new_name)

    def exec_module(self, module):
        pass  # the new module is already executed


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new_name = MOVED_MODULES.get(fullname)
        if new_name is None:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(new_name))


def install():
    """Puts the finder first on `sys.meta_path` (once): an old path must win over a leftover file of that name."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())
