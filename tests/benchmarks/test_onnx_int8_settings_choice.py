"""The ONNX int8 settings study chooses its setting on the validation set alone (issue 44: the test set reports)."""

from benchmarks.studies.onnx_int8_settings import onnx_int8_settings as study


def test_the_setting_of_the_best_validation_accuracy_is_chosen_the_first_listed_on_a_tie():
    assert study.choose_setting({"per_tensor": 0.84, "per_channel": 0.85, "per_channel_reduce_range": 0.85}) == \
        "per_channel"
    assert study.choose_setting({"per_tensor": 0.86, "per_channel": 0.85}) == "per_tensor"


def test_head_fp32_settings_leave_the_last_two_matmuls_out_and_the_others_quantize_every_one():
    settings = study._settings(["m0", "m1", "pooler", "head"])
    assert list(settings) == list(study.SETTINGS)
    assert settings["per_tensor_head_fp32"] == {"nodes_to_exclude": ["pooler", "head"]}
    assert settings["per_channel_head_fp32"] == {"per_channel": True, "nodes_to_exclude": ["pooler", "head"]}
    assert settings["per_channel"] == {"per_channel": True} and settings["per_tensor"] == {}
