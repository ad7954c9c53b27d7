"""The benchmark's cached sentiment classifier is reused only when it was made with the demo's current recipe."""

import json

import pytest

from benchmarks import classifier
from keras_bert.examples.demo import RECIPE

ONCE = pytest.mark.only_backend("jax", reason="reads a JSON record: the same on every backend")


def cached_run(folder, **job):
    folder.mkdir()
    (folder / "model.keras").write_bytes(b"")  # not read: reuse is decided on the job record
    (folder / "finetune.json").write_text(json.dumps({"job": {"task": "classifier", "seed": 0, **job}}))
    return folder


@ONCE
def test_a_run_made_with_the_current_recipe_is_reused(tmp_path):
    folder = cached_run(tmp_path / "current", **RECIPE)
    assert classifier.ensure_classifier(folder) == (folder, 0.0)


@ONCE
@pytest.mark.parametrize("changed", sorted(RECIPE))
def test_a_run_made_with_an_earlier_recipe_is_not(tmp_path, changed):
    earlier = {**RECIPE, changed: "something else"}
    assert not classifier._made_with(cached_run(tmp_path / "earlier", **earlier), RECIPE)
    # A record from before a setting was recorded (or one that is unreadable) is not taken for the recipe either.
    older = {k: v for k, v in RECIPE.items() if k != changed}
    assert not classifier._made_with(cached_run(tmp_path / "older", **older), RECIPE)
    broken = tmp_path / "broken"
    cached_run(broken, **RECIPE)
    (broken / "finetune.json").write_text("{")
    assert not classifier._made_with(broken, RECIPE)
