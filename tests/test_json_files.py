"""One reader for the JSON files of checkpoint folders: every failure names the file and what it is."""

import pytest

from keras_bert.json_files import read_json


def test_reads_an_object_or_the_array_asked_for(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    (tmp_path / "modules.json").write_text('[{"type": "Pooling"}]')
    assert read_json(tmp_path / "config.json", "config") == {"model_type": "bert"}
    assert read_json(tmp_path / "modules.json", "module list", expected=list) == [{"type": "Pooling"}]


def test_missing_broken_and_mistyped_files_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"Cannot read the shard index .*absent\.json"):
        read_json(tmp_path / "absent.json", "shard index")
    (tmp_path / "broken.json").write_text('{"vocab_size": ')
    with pytest.raises(ValueError, match=r"Cannot read the config .*broken\.json: Expecting value"):
        read_json(tmp_path / "broken.json", "config")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"list\.json must hold a JSON object\. Received: list"):
        read_json(tmp_path / "list.json", "config")
    (tmp_path / "object.json").write_text("{}")
    with pytest.raises(ValueError, match=r"object\.json must hold a JSON array\. Received: dict"):
        read_json(tmp_path / "object.json", "module list", expected=list)
