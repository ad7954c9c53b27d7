"""An exported BertTextEmbedder: `serve_text` gives the embeddings the Keras model and its pipeline give."""

import numpy as np
import pytest

from embedding_helpers import TINY_SENTENCES
from harness import tiny_backbone
from keras_bert import BertTextEmbedder
from keras_bert.cli.main import main
from keras_bert.export import ExportedModel, export_saved_model
from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline
from task_helpers import fixture_tokenizer

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the served graph is TensorFlow whatever backend trained the model; JAX and torch export through the "
    "same TensorFlow child process that the classifier export tests cover on every backend",
)
LONG = " ".join(TINY_SENTENCES * 3)  # longer than the 12-token sequence: truncated, as in the pipeline


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = BertTextEmbedder(tiny_backbone(), pooling="mean", normalize=True, sequence_length=12)
    directory = tmp_path_factory.mktemp("embedder") / "saved"
    metadata = export_saved_model(model, directory, fixture_tokenizer(), verbose=False)
    return model, directory, metadata


def test_serve_text_embeddings_equal_the_keras_pipeline(exported):
    model, directory, metadata = exported
    assert (metadata["task"], metadata["sequence_length"]) == ("text_embedder", 12)  # the model's sequence_length
    texts = [*TINY_SENTENCES, LONG]
    served = ExportedModel(str(directory))
    results, stats = served.predict_with_stats(texts)
    pipeline = TextEmbedderPipeline(model, fixture_tokenizer())
    np.testing.assert_allclose([r["embedding"] for r in results], pipeline(texts), atol=1e-5)
    assert stats[-1] == pipeline.input_stats(LONG) and stats[-1]["truncated_tokens"] > 0
    # serve_token_ids: the model on already packed ids.
    x = pipeline.inputs(TINY_SENTENCES)
    import tensorflow as tf  # the test runs on TensorFlow only (see pytestmark)

    out = served.serve_token_ids(**{k: tf.constant(v) for k, v in x.items()})["embeddings"].numpy()
    np.testing.assert_allclose(out, np.asarray(model.predict(x, verbose=0)), atol=1e-5)


def test_embed_command_on_the_saved_model(exported, capsys, tmp_path):
    model, directory, _ = exported
    assert main(["embed", str(directory), *TINY_SENTENCES[:2], "--out", str(tmp_path / "v.npy")]) == 0
    expected = TextEmbedderPipeline(model, fixture_tokenizer())(TINY_SENTENCES[:2])
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), expected, atol=1e-5)
    assert main(["embed", str(directory), "anna came", "--pooling", "cls"]) == 2
    assert "fixed in an exported SavedModel" in capsys.readouterr().err
