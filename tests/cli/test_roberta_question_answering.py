"""RoBERTa question answering: windows laid out as transformers' RobertaTokenizer lays out a question and a context
(`<s> question </s></s> context </s>`, one token type), then a tiny RoBERTa folder fine-tuned from the command line
whose pipeline and SavedModel answer alike, the answers cut from the context by byte-level BPE offsets.

The folder: the RoBERTa test vocabulary (trained on Austen, tests/fixtures/family_tokenizers/roberta) and a tiny
random transformers `RobertaModel`.
"""

import shutil

import pytest

from family_helpers import hf_model, transformers
from keras_bert.cli import main as cli
from preprocessing_helpers import family_folder
from task_helpers import FIXTURES, check_served_answers

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the windows are TensorFlow/NumPy preprocessing and command-line plumbing, the same on every backend "
    "(RoBERTa's numbers are checked on all three in tests/models/test_roberta_backbone.py); on TensorFlow the "
    "SavedModel export runs in this process",
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from keras_bert import BytePairTokenizer

    folder = tmp_path_factory.mktemp("roberta")
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(f"{family_folder('roberta')}/{name}", folder / name)
    tokenizer = BytePairTokenizer.from_pretrained(folder)
    config = transformers.RobertaConfig(
        vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=66, type_vocab_size=1, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id, layer_norm_eps=1e-5,
    )  # fmt: skip
    hf_model("RobertaModel", config, seed=0).save_pretrained(folder)
    return folder


def test_windows_are_transformers_pair_layout(folder):
    from transformers import RobertaTokenizer

    from keras_bert import BytePairTokenizer
    from keras_bert.preprocessing.task_data.squad_data import SquadExample, squad_features

    ours, reference = BytePairTokenizer.from_pretrained(folder), RobertaTokenizer.from_pretrained(folder)
    question, context = "where does anna live ?", "Zoë said: anna lives in oslo ."
    start = context.index("oslo")
    example = SquadExample("q0", question, context, [("oslo", start)])
    features = squad_features([example], ours, sequence_length=48)  # questions up to 12 tokens: this one whole
    expected = reference(question, context)["input_ids"]
    row = features.x["token_ids"][0].tolist()
    assert row[: len(expected)] == expected and set(row[len(expected):]) == {ours.pad_token_id}
    assert set(features.x["segment_ids"][0].tolist()) == {0}  # RoBERTa has one token type
    # The answer's tokens: "Ġoslo" trimmed of its space starts where the answer does.
    first, last = int(features.y["start"][0]), int(features.y["end"][0])
    offsets = features.info["offsets"][0]
    assert context[offsets[first][0] : offsets[last][1]] == "oslo"
    assert features.info["answers_not_on_token_boundaries"] == 0


def test_finetune_a_roberta_question_answerer_and_serve_its_answers(folder, tmp_path):
    import json

    run = tmp_path / "qa"
    assert cli([
        "finetune", "--task", "qa", "--init", str(folder), "--train", str(FIXTURES / "squad_v1_train.json"),
        "--eval", str(FIXTURES / "squad_v1_dev.json"), "--sequence-length", "32", "--batch-size", "32",
        "--epochs", "2", "--learning-rate", "3e-3", "--no-tensorboard", "--out", str(run),
    ]) == 0  # fmt: skip
    metrics = json.loads((run / "metrics.json").read_text())["validation"]
    print(f"RoBERTa QA (tiny, random start, 2 epochs): validation exact match {metrics['exact_match']:.1f}")
    assert metrics["exact_match"] > 30
    pipeline = check_served_answers(run, tmp_path / "served")
    assert pipeline.tokenizer.separators_between == 2
