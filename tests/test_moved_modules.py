"""Old module paths still import (the new module itself) and say where the module went."""

import importlib
import sys
import warnings

import pytest

from keras_bert import _moved_modules


def test_every_moved_module_imports_as_its_new_module_with_a_deprecation_warning():
    assert _moved_modules.MOVED_MODULES, "keras_bert/__init__.py registers the moves of issue 16"
    for old, new in _moved_modules.MOVED_MODULES.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(new), old
        assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), old


def test_an_unknown_module_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("keras_bert.no_such_module")


def test_old_attribute_access_on_the_package_still_works():
    import keras_bert

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert keras_bert.finetuning.finetune is importlib.import_module("keras_bert.jobs.finetune").finetune
