"""SavedModel export: serve_text on raw strings == model.predict on Python-tokenized strings.

Every call of an exported model runs in a separate Python that has neither
keras nor keras_bert installed (see serve_without_keras.py), as a serving
process would. The models are built and exported on the backend under test
(torch exports through a TensorFlow child process, as JAX would: that path is
checked from torch only).
"""

import os
import shutil

import keras
import numpy as np
import pytest

from export_helpers import (
    LONG_TEXTS,
    SHORT_TEXTS,
    ids_call,
    packed,
    saved_functions,
    serve,
    task_models,
    text_call,
    tokenizer,
)
from keras_bert.export import ExportedModel, export_saved_model, read_metadata

# JAX and torch hand the model to the same TensorFlow child process (a .keras file), so the JAX pass adds
# nothing the torch pass does not check; the served graphs themselves are checked on TensorFlow.
pytestmark = pytest.mark.not_backend("jax", reason="from JAX an export goes exactly as from torch (the model saved "
                                     "as .keras, written by a TensorFlow child: keras_bert.export.tensorflow_worker)")
ON_TENSORFLOW_ONLY = pytest.mark.only_backend(
    "tensorflow",
    reason="the served graph is TensorFlow whatever backend trained the model; the cross-backend path "
    "(JAX/torch → TensorFlow child process) is covered by the classifier tests from torch",
)
# ExportedModel and `keras-bert predict` on a SavedModel run TensorFlow in this process, on a graph that
# is the same whichever backend exported it (the `served` tests check each backend's export).
SERVED_IN_THIS_PROCESS = pytest.mark.only_backend(
    "tensorflow",
    reason="loads the SavedModel with TensorFlow in this process: the same graph whatever backend exported it; "
    "each backend's export is checked by the serve tests (TensorFlow, and torch for the child)",
)
SEQUENCE_LENGTH = 16
# Hostile strings: empty, whitespace only, invalid UTF-8 (as lone surrogates →
# raw bytes 0xff 0xfe), NUL/control characters and a zero-width joiner, 100 KB.
BAD_TEXTS = ["", " \t\n\r ", "\udcff\udcfe bad bytes", "nul\x00 and \x07 zwj\u200d", "good " * 20_000]
QUESTIONS = ["Who met Ivan?", "Where does Anna live?", "what"]
CONTEXTS = ["Anna Smith met Ivan in Paris yesterday.", "Anna lives in Oslo, Ben lives in Rome.", ""]


def softmax(x):
    x = np.asarray(x, "float64")
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def models():
    return task_models()


@pytest.fixture(scope="module")
def exports(models, tmp_path_factory):
    """Exported directories: the classifier on every backend, every task on TensorFlow."""
    root = tmp_path_factory.mktemp("exports")
    tok = tokenizer()
    names = ["classifier"]
    if keras.backend.backend() == "tensorflow":
        names += ["regressor", "token_classifier", "question_answerer", "multiple_choice", "backbone", "pairs"]
    directories = {}
    for name in names:
        model = models["classifier" if name == "pairs" else name]
        length = {"question_answerer": 48, "token_classifier": 32}.get(name, SEQUENCE_LENGTH)
        directories[name] = root / name
        export_saved_model(
            model, directories[name], tok, sequence_length=length, text_pair=name == "pairs", verbose=False
        )
    return directories




def _calls(exports):
    """Every call the tests check, named; served in one keras-less process."""
    c = exports["classifier"]
    calls = {
        "batch1": text_call(c, text=SHORT_TEXTS[:1]),
        "batch5": text_call(c, text=SHORT_TEXTS),
        "long": text_call(c, text=LONG_TEXTS),
        "ids8": ids_call(c, packed(SHORT_TEXTS, 8)),
        "ids32": ids_call(c, packed(LONG_TEXTS, 32)),
        "bad_texts": text_call(c, text=BAD_TEXTS),
        "empty_batch": text_call(c, text=[]),
        "float_ids": ids_call(c, {**packed(SHORT_TEXTS, 8), "token_ids": packed(SHORT_TEXTS, 8)["token_ids"] * 1.0},
                              dtypes={"token_ids": "float32", "segment_ids": "int32", "padding_mask": "int32"}),
        "id_out_of_range": ids_call(c, {**packed(SHORT_TEXTS[:1], 8), "token_ids": np.full((1, 8), 10_000)}),
        "too_long": ids_call(c, {"token_ids": np.ones((1, 80), "int32"), "segment_ids": np.zeros((1, 80), "int32"),
                                 "padding_mask": np.ones((1, 80), "int32")}),
        "shape_mismatch": ids_call(c, {**packed(SHORT_TEXTS, 8), "segment_ids": np.zeros((5, 7), "int32")}),
        "rank2_text": text_call(c, text=[SHORT_TEXTS[:2]]),  # a loaded signature does not check its rank itself
        "after_errors": text_call(c, text=SHORT_TEXTS[:2]),
    }
    if "token_classifier" in exports:
        calls.update({
            "regressor": text_call(exports["regressor"], text=SHORT_TEXTS),
            "ner": text_call(exports["token_classifier"], text=SHORT_TEXTS + LONG_TEXTS[1:]),
            "ner_bad": text_call(exports["token_classifier"], text=BAD_TEXTS[:4]),
            "ner_empty": text_call(exports["token_classifier"], text=[]),
            "qa": text_call(exports["question_answerer"], question=QUESTIONS, context=CONTEXTS),
            "qa_empty": text_call(exports["question_answerer"], question=[], context=[]),
            "mc": text_call(exports["multiple_choice"], context=SHORT_TEXTS[:2],
                            choices=[["good", "bad", "in Paris"], ["Oslo", "Rome", ""]]),
            "backbone": text_call(exports["backbone"], text=SHORT_TEXTS),
            "pairs": text_call(exports["pairs"], text=SHORT_TEXTS[:3], text_pair=SHORT_TEXTS[2:]),
        })
    return calls


@pytest.fixture(scope="module")
def served(exports, tmp_path_factory):
    calls = _calls(exports)
    results = serve(tmp_path_factory.mktemp("serve"), list(calls.values()))
    return dict(zip(calls, results))


def predicted_probabilities(model, texts, sequence_length=SEQUENCE_LENGTH, pairs=None):
    return softmax(model.predict(packed(texts, sequence_length, pairs), verbose=0))


# ----------------------------------------------------------------- classifier
@pytest.mark.parametrize("call, texts", [("batch1", SHORT_TEXTS[:1]), ("batch5", SHORT_TEXTS)])
def test_serve_text_equals_predict_on_python_tokenized_text(models, served, call, texts):
    out = served[call]
    expected = predicted_probabilities(models["classifier"], texts)
    np.testing.assert_allclose(out["probabilities"], expected, atol=1e-5)
    names = np.array(["negative", "neutral", "positive"])
    assert [label.decode() for label in out["label"]] == list(names[expected.argmax(-1)])
    np.testing.assert_allclose(out["score"], expected.max(-1), atol=1e-5)


def test_serve_text_windows_long_texts_as_the_pipeline_does(models, served):
    # tests/export/test_long_texts_served.py checks the windows against hand-built ones, task by task.
    from keras_bert.pipelines import TextClassifierPipeline

    pipeline = TextClassifierPipeline(models["classifier"], tokenizer(), sequence_length=SEQUENCE_LENGTH)
    expected = pipeline(LONG_TEXTS)
    np.testing.assert_allclose(
        served["long"]["probabilities"], [list(e["probabilities"].values()) for e in expected], atol=1e-5
    )
    # 40 and 45 wordpieces: windows of 14 every 7.
    assert served["long"]["num_windows"].tolist() == [s["windows"] for s in pipeline.input_stats(LONG_TEXTS)] == [5, 6]


@pytest.mark.parametrize("call, texts, length", [("ids8", SHORT_TEXTS, 8), ("ids32", LONG_TEXTS, 32)])
def test_serve_token_ids_at_two_lengths(models, served, call, texts, length):
    out = served[call]
    logits = models["classifier"].predict(packed(texts, length), verbose=0)
    np.testing.assert_allclose(out["logits"], logits, atol=1e-5)
    np.testing.assert_allclose(out["probabilities"], softmax(logits), atol=1e-5)


def test_hostile_strings_give_defined_outputs(models, served):
    out = served["bad_texts"]
    assert out["probabilities"].shape == (len(BAD_TEXTS), 3)
    assert np.isfinite(out["probabilities"]).all()
    # Invalid bytes are dropped and control characters cleaned, as the
    # tokenizer does in Python; the 100 KB text is read in 2,857 windows, every
    # one "good" x 14, so their mean is the answer of one such window.
    texts = ["", "", "\ufffd\ufffd bad bytes", "nul\x00 and \x07 zwj\u200d", "good " * (SEQUENCE_LENGTH - 2)]
    np.testing.assert_allclose(out["probabilities"], predicted_probabilities(models["classifier"], texts), atol=1e-5)
    assert out["num_windows"][4] == 1 + -(-(20_000 - 14) // 7) and out["num_tokens"][4] == 20_000
    np.testing.assert_allclose(out["probabilities"][0], out["probabilities"][1], atol=1e-6)  # both "[CLS] [SEP]"


def test_empty_batch_gives_empty_outputs(served):
    out = served["empty_batch"]
    assert out["probabilities"].shape == (0, 3) and out["label"].shape == (0,)


@pytest.mark.parametrize(
    "call, message",
    [
        ("float_ids", "int32"),
        ("id_out_of_range", "`token_ids` must be < vocabulary_size"),
        ("too_long", "max_sequence_length=64"),
        ("shape_mismatch", "`segment_ids` must have the shape of `token_ids`"),
        ("rank2_text", "Shape of tensor text [1,2] is not compatible with expected shape [?]"),
    ],
)
def test_bad_inputs_fail_clearly_and_the_server_goes_on(served, call, message):
    assert message in served[call]["error"]
    assert served["after_errors"]["probabilities"].shape == (2, 3)


def test_metadata_assets_and_signatures(exports, models):
    directory = exports["classifier"]
    metadata = read_metadata(directory)
    assert metadata["task"] == "classifier" and metadata["sequence_length"] == SEQUENCE_LENGTH
    assert metadata["label_names"] == ["negative", "neutral", "positive"]
    assert metadata["training_backend"] == keras.backend.backend() and metadata["export_backend"] == "tensorflow"
    assert metadata["backbone_config"]["vocabulary_size"] == tokenizer().vocabulary_size()
    assert set(metadata["versions"]) >= {"keras_bert", "keras", "tensorflow", "tensorflow_text"}
    assets = sorted(os.listdir(directory / "assets"))
    assert assets == ["keras_bert_export.json", "labels.txt", "vocab.txt"]
    assert (directory / "assets" / "vocab.txt").read_text().split("\n")[:-1] == tokenizer().get_vocabulary()


# ------------------------------------------------------------ the other tasks
@ON_TENSORFLOW_ONLY
def test_regressor_and_pairs_and_backbone(models, served):
    x = packed(SHORT_TEXTS, SEQUENCE_LENGTH)
    np.testing.assert_allclose(served["regressor"]["value"], models["regressor"].predict(x, verbose=0)[:, 0], atol=1e-5)
    expected = predicted_probabilities(models["classifier"], SHORT_TEXTS[:3], pairs=SHORT_TEXTS[2:])
    np.testing.assert_allclose(served["pairs"]["probabilities"], expected, atol=1e-5)
    backbone_out = models["backbone"].predict(x, verbose=0)
    np.testing.assert_allclose(served["backbone"]["pooled_output"], backbone_out["pooled_output"], atol=1e-5)


@ON_TENSORFLOW_ONLY
def test_token_classifier_entities_equal_the_python_pipeline(models, served):
    from keras_bert.pipelines import TokenClassifierPipeline

    model = models["token_classifier"]
    out = served["ner"]
    texts = SHORT_TEXTS + LONG_TEXTS[1:]
    x = packed(SHORT_TEXTS, 32)
    probabilities = softmax(model.predict(x, verbose=0))
    # One row per wordpiece (no [CLS]): position 1 onwards of the packed sequence.
    for i, n in enumerate(x["padding_mask"].sum(axis=1) - 2):
        np.testing.assert_allclose(out["token_probabilities"][i, :n], probabilities[i, 1 : 1 + n], atol=1e-5)
        assert not out["token_probabilities"][i, n:].any()
    # Short texts and the long one (windowed): the in-graph BIO decoding equals the pipeline's.
    pipeline = TokenClassifierPipeline(model, tokenizer(), sequence_length=32)
    found = 0
    for i, text in enumerate(texts):
        expected = pipeline(text)
        n = int(out["num_entities"][i])
        got = [
            {"type": out["entity_type"][i, j].decode(), "text": out["entity_text"][i, j].decode(),
             "start": int(out["entity_start"][i, j]), "end": int(out["entity_end"][i, j])}
            for j in range(n)
        ]
        assert got == [{k: e[k] for k in ("type", "text", "start", "end")} for e in expected], text
        np.testing.assert_allclose(out["entity_score"][i, :n], [e["score"] for e in expected], atol=1e-5)
        assert all(text[g["start"] : g["end"]] == g["text"] for g in got)
        found += n
    assert found >= 3, "the sharpened random tagger should find some entities"
    assert (out["entity_start"][out["entity_type"] == b""] == -1).all()  # padding


@ON_TENSORFLOW_ONLY
def test_token_classifier_hostile_and_empty_inputs(served):
    assert served["ner_bad"]["num_entities"].shape == (4,)
    assert served["ner_empty"]["entity_type"].shape[0] == 0


@ON_TENSORFLOW_ONLY
def test_question_answerer_equals_the_python_pipeline(models, served):
    from keras_bert.pipelines import QuestionAnswererPipeline

    out = served["qa"]
    pipeline = QuestionAnswererPipeline(models["question_answerer"], tokenizer(), sequence_length=48)
    for i, (question, context) in enumerate(zip(QUESTIONS[:2], CONTEXTS[:2])):
        expected = pipeline(question, context)
        assert out["answer"][i].decode() == expected["answer"] == context[expected["start"] : expected["end"]]
        assert (int(out["answer_start"][i]), int(out["answer_end"][i])) == (expected["start"], expected["end"])
        assert 0 < out["score"][i] <= 1
    # An empty context has no span: "" at -1, score 0.
    assert out["answer"][2] == b"" and out["answer_start"][2] == -1 and out["score"][2] == 0
    assert served["qa_empty"]["answer"].shape == (0,)


@ON_TENSORFLOW_ONLY
def test_multiple_choice_equals_predict(models, served):
    from keras_bert.preprocessing.task_data.multiple_choice_data import BertMultipleChoicePreprocessor

    choices = [["good", "bad", "in Paris"], ["Oslo", "Rome", ""]]
    x = BertMultipleChoicePreprocessor(tokenizer(), SEQUENCE_LENGTH)({"context": SHORT_TEXTS[:2], "choices": choices})
    expected = softmax(models["multiple_choice"].predict({k: v.numpy() for k, v in x.items()}, verbose=0))
    out = served["mc"]
    np.testing.assert_allclose(out["probabilities"], expected, atol=1e-5)
    assert list(out["choice"]) == list(expected.argmax(-1))
    assert [t.decode() for t in out["choice_text"]] == [c[k] for c, k in zip(choices, expected.argmax(-1))]


# ------------------------------------------------------------ export failures
def test_export_refuses_bad_requests_before_writing_anything(models, tmp_path):
    from keras_bert import BertPretrainer

    target = tmp_path / "never"
    with pytest.raises(ValueError, match="`tokenizer` is required"):
        export_saved_model(models["classifier"], target, None)
    with pytest.raises(ValueError, match="pretraining model"):
        export_saved_model(BertPretrainer(models["backbone"]), target, tokenizer())
    with pytest.raises(ValueError, match="max_sequence_length"):
        export_saved_model(models["classifier"], target, tokenizer(), sequence_length=65)
    from keras_bert import BertTokenClassifier

    with pytest.raises(ValueError, match="needs `label_names`"):
        export_saved_model(BertTokenClassifier(models["backbone"], num_classes=3), target, tokenizer())
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    small = BertTokenizer(tokenizer().get_vocabulary()[:50])
    with pytest.raises(ValueError, match="do not belong together"):
        export_saved_model(models["classifier"], target, small)
    with pytest.raises(ValueError, match="`window_stride` must be an int >= 0; received -1"):
        export_saved_model(models["classifier"], target, tokenizer(), window_stride=-1)
    with pytest.raises(TypeError, match=r"unexpected options \['window_strid'\]"):
        export_saved_model(models["classifier"], target, tokenizer(), window_strid=4)
    assert os.listdir(tmp_path) == []


def test_existing_directory_is_kept_without_overwrite(models, exports):
    before = sorted(os.listdir(exports["classifier"]))
    with pytest.raises(ValueError, match="already exists"):
        export_saved_model(models["classifier"], exports["classifier"], tokenizer())
    assert sorted(os.listdir(exports["classifier"])) == before


@ON_TENSORFLOW_ONLY
def test_a_failed_export_leaves_no_partial_directory(models, tmp_path, monkeypatch):
    import tensorflow as tf

    def fail_midway(module, directory, signatures):
        (tmp_path / os.path.basename(directory) / "saved_model.pb").write_text("half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(tf.saved_model, "save", fail_midway)
    with pytest.raises(RuntimeError, match="disk full"):
        export_saved_model(models["regressor"], tmp_path / "sst", tokenizer(), verbose=False)
    assert os.listdir(tmp_path) == []


@SERVED_IN_THIS_PROCESS
def test_missing_assets_are_refused_by_name(exports, tmp_path):
    for asset in ("labels.txt", "vocab.txt", "keras_bert_export.json"):
        broken = tmp_path / asset
        shutil.copytree(exports["classifier"], broken)
        os.remove(broken / "assets" / asset)
        with pytest.raises(ValueError, match=asset.replace(".", r"\.")):
            ExportedModel(broken)


@SERVED_IN_THIS_PROCESS
def test_exported_model_predicts_like_the_pipeline(models, exports):
    served = ExportedModel(exports["classifier"])
    results = served.predict(SHORT_TEXTS[:2])
    expected = predicted_probabilities(models["classifier"], SHORT_TEXTS[:2])
    assert [r["label"] for r in results] == [["negative", "neutral", "positive"][k] for k in expected.argmax(-1)]
    np.testing.assert_allclose([list(r["probabilities"].values()) for r in results], expected, atol=1e-5)
    with pytest.raises(ValueError, match="takes 1 inputs"):
        served.predict(["a"], ["b"])


# ------------------------------------------------------------------------ CLI
def cli(args, capsys, stdin=None, monkeypatch=None):
    """`keras-bert ARGS` in this process: (exit code, stdout lines, stderr)."""
    import io

    from keras_bert.cli import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(args)
    out, err = capsys.readouterr()
    return code, [line for line in out.splitlines() if line.startswith("{")], err


@SERVED_IN_THIS_PROCESS
def test_cli_predict_with_a_saved_model(models, exports, capsys, monkeypatch, tmp_path):
    import json

    code, lines, _ = cli(["predict", str(exports["classifier"]), *SHORT_TEXTS[:2]], capsys)
    assert code == 0 and len(lines) == 2
    first = json.loads(lines[0])
    expected = predicted_probabilities(models["classifier"], SHORT_TEXTS[:1])[0]
    assert first["input"] == SHORT_TEXTS[0]
    np.testing.assert_allclose(list(first["probabilities"].values()), expected, atol=1e-5)
    # stdin and --file give the same lines; a blank line gets its own output line, with an error.
    code, from_stdin, _ = cli(["predict", str(exports["classifier"])], capsys, stdin="\n".join(SHORT_TEXTS[:2]) + "\n\n", monkeypatch=monkeypatch)
    assert code == 0 and from_stdin[:2] == lines and json.loads(from_stdin[2])["input"] == ""
    assert "error" in json.loads(from_stdin[2]) and len(from_stdin) == 3
    (tmp_path / "in.txt").write_text("\n".join(SHORT_TEXTS[:2]), encoding="utf-8")
    assert cli(["predict", str(exports["classifier"]), "--file", str(tmp_path / "in.txt")], capsys)[1] == lines


def test_cli_predict_with_a_keras_file_matches_the_saved_model(models, exports, capsys, tmp_path):
    import json

    path = tmp_path / "classifier.keras"
    models["classifier"].save(path)
    code, keras_lines, _ = cli(["predict", "--tokenizer", str(tokenizer_vocab(tmp_path)), "--sequence-length",
                                str(SEQUENCE_LENGTH), str(path), *SHORT_TEXTS], capsys)
    assert code == 0
    _, saved_lines, _ = cli(["predict", str(exports["classifier"]), *SHORT_TEXTS], capsys)
    for a, b in zip(map(json.loads, keras_lines), map(json.loads, saved_lines)):
        assert a["label"] == b["label"]
        np.testing.assert_allclose(list(a["probabilities"].values()), list(b["probabilities"].values()), atol=1e-5)


def tokenizer_vocab(folder):
    path = folder / "vocab.txt"
    path.write_text("".join(t + "\n" for t in tokenizer().get_vocabulary()), encoding="utf-8")
    return path


@ON_TENSORFLOW_ONLY
def test_cli_export_of_a_finetune_folder(models, capsys, tmp_path):
    """A finetune --out folder: its vocab.txt, casing, sequence length and backend are picked up."""
    import json

    run = tmp_path / "run"
    run.mkdir()
    models["classifier"].save(run / "model.keras")
    tokenizer_vocab(run)
    job = {"task": "classify", "lowercase": True, "sequence_length": 24, "pair_column": None, "backend": "jax"}
    (run / "finetune.json").write_text(json.dumps({"job": job}), encoding="utf-8")
    code, _, err = cli(["export", str(run), "--out", str(tmp_path / "sm")], capsys)
    assert code == 0, err
    metadata = read_metadata(tmp_path / "sm")
    assert metadata["sequence_length"] == 24 and metadata["training_backend"] == "jax"
    assert metadata["signatures"]["serve_text"] == ["text"]


@SERVED_IN_THIS_PROCESS
@pytest.mark.parametrize(
    "args, message",
    [
        (["predict", "/nonexistent/model"], "no such file"),
        (["predict", "{classifier}"], "no inputs"),
        (["export", "{classifier}", "--out", "{tmp}/x"], "the folder has no model.keras"),
        (["export", "{keras}", "--out", "{tmp}/x"], "no tokenizer found"),
        (["predict", "{classifier}", "a\tb"], "expected one text (no tab)"),
    ],
)
def test_cli_user_errors_are_one_line_with_exit_code_2(exports, models, capsys, monkeypatch, tmp_path, args, message):
    import io

    keras_file = tmp_path / "lonely.keras"
    if "{keras}" in args:
        models["regressor"].save(keras_file)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    args = [a.format(classifier=exports["classifier"], tmp=tmp_path, keras=keras_file) for a in args]
    code, lines, err = cli(args, capsys)
    assert code == 2 and not lines
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_saved_model_holds_only_the_functions_it_serves(exports):
    # The save used to trace, and write, each Keras model's default signature (the task model and its backbone)
    # and the tokenizer's internal graphs: nothing loads them, and they took two thirds of an export's time.
    functions = saved_functions(exports["classifier"])
    assert "root.tokenize" in functions
    extra = [f for f in functions if f != "root.tokenize" and not f.startswith(("root.vocab_table.", "root.label_table."))]
    assert extra == []
