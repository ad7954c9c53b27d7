"""Shared pieces of the sentence-embedding tests: a tiny random sentence-transformers folder, real sentences.

The folder is what sentence-transformers itself saves for a BERT with a
Pooling (and optionally a Normalize) module: a Hugging Face BERT written with
transformers' `save_pretrained` (random weights, the fixtures' vocab.txt),
`modules.json`, `sentence_bert_config.json` and `1_Pooling/config.json`.
"""

import json
import shutil

from task_helpers import FIXTURES

# Words of the fixtures' vocabulary (tests/fixtures/tasks/vocab.txt), so the tiny model sees few [UNK]s.
TINY_SENTENCES = [
    "anna came by bike",
    "ben read a boring book",
    "a black boat and a blue bike",
    "an awful , bad book !",
    "anna and ben came",
    "a brown boat by cairo ?",
]


def write_sentence_transformers_folder(folder, pooling="mean", normalize=True, max_seq_length=16, seed=0,
                                       modules=None):
    """Writes a tiny random sentence-transformers model to `folder` (a pathlib.Path) and returns its str path.

    Args:
        pooling: the Pooling module's mode (a sentence-transformers name, or a list of them).
        normalize: whether a Normalize module follows the pooling.
        max_seq_length: `sentence_bert_config.json`'s value.
        modules: a `modules.json` list to write instead of the default one.
    """
    import torch  # deferred: only tests that write the folder need torch and transformers
    import transformers

    torch.manual_seed(seed)
    vocab = (FIXTURES / "vocab.txt").read_text(encoding="utf-8").splitlines()
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, attn_implementation="eager",
    )
    model = transformers.BertModel(config).eval()
    with torch.no_grad():  # random init leaves biases and LayerNorms at 0/1: perturb all, so mistakes show
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}), encoding="utf-8"
    )
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"embedding_dimension": 16, "pooling_mode": pooling, "include_prompt": True}), encoding="utf-8"
    )
    if modules is None:
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        ]
        if normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    return str(folder)


def movie_review_sentences(shared_data, count=19):
    """The first `count` movie-review snippets of the shared data (real English sentences)."""
    lines = (shared_data / "sentiment" / "movieReviewSnippets_GroundTruth.txt").read_text(encoding="utf-8")
    return [line.split("\t")[2].strip() for line in lines.splitlines()[:count]]


def long_austen_text(shared_data, words=400):
    """A passage of Emma longer than 256 wordpieces (sentence-transformers truncates it)."""
    text = (shared_data / "austen" / "emma.txt").read_text(encoding="utf-8").split()
    return " ".join(text[5000 : 5000 + words])
