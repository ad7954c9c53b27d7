"""keras_bert.atomic_files: a reader sees the old file or folder or the finished new one, never a half-written one."""

import os

import pytest

from keras_bert.atomic_files import replace_atomically, staging_folder, write_atomically, write_json_atomically


def _leftovers(folder):
    return [name for name in os.listdir(folder) if ".tmp-" in name or ".partial-" in name or ".old-" in name]


def test_write_atomically_replaces_the_file_and_leaves_nothing_on_error(tmp_path):
    path = tmp_path / "record.json"
    write_json_atomically({"step": 1}, path)
    assert path.read_text(encoding="utf-8") == '{\n  "step": 1\n}'

    def fails(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError):
        write_atomically(path, fails)
    assert path.read_text(encoding="utf-8") == '{\n  "step": 1\n}' and not _leftovers(tmp_path)


def test_staging_folder_becomes_the_directory_only_when_the_block_succeeds(tmp_path):
    target = tmp_path / "export"
    with staging_folder(target, overwrite=False) as staging:
        (open(os.path.join(staging, "a.txt"), "w")).close()
    assert os.listdir(target) == ["a.txt"]
    with pytest.raises(ValueError, match="already exists"):
        with staging_folder(target, overwrite=False):
            pass
    with pytest.raises(RuntimeError):
        with staging_folder(target, overwrite=True) as staging:
            (open(os.path.join(staging, "b.txt"), "w")).close()
            raise RuntimeError("export failed")
    assert os.listdir(target) == ["a.txt"] and not _leftovers(tmp_path)
    with staging_folder(target, overwrite=True) as staging:
        (open(os.path.join(staging, "b.txt"), "w")).close()
    assert os.listdir(target) == ["b.txt"] and not _leftovers(tmp_path)


def test_replace_atomically_takes_files_and_folders_and_refuses_to_overwrite_unasked(tmp_path):
    def write_folder(path):
        os.makedirs(path)
        with open(os.path.join(path, "config.json"), "w") as f:
            f.write("{}")

    folder = tmp_path / "checkpoint"
    folder.mkdir()  # an empty folder counts as none
    assert replace_atomically(folder, False, write_folder) == str(folder)
    with pytest.raises(FileExistsError, match="overwrite"):
        replace_atomically(folder, False, write_folder)
    replace_atomically(folder, True, write_folder)
    assert os.listdir(folder) == ["config.json"]

    def write_file(path):
        with open(path, "w") as f:
            f.write("new")

    file = tmp_path / "vocab.txt"
    file.write_text("old")
    replace_atomically(file, True, write_file)
    assert file.read_text() == "new"

    def fails(path):
        write_folder(path)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(folder, True, fails)
    assert os.listdir(folder) == ["config.json"] and not _leftovers(tmp_path)
