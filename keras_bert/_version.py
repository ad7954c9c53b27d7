"""The package version, in a module that imports nothing: `keras_bert.__version__` and the export metadata read it here."""

__version__ = "0.1.0"
