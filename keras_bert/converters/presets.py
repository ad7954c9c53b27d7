"""Named presets: short names for BERT checkpoints on the Hugging Face Hub.

`BertBackbone.from_preset("bert_base_en_uncased")` (or `from_pretrained`, the
same thing) looks the name up here and reads `hf://google-bert/bert-base-uncased`
(`checkpoint.resolve_hub_path`: huggingface_hub's cache, downloading when online).
A preset name is one of:

- a keras-hub 0.32 BERT preset name (`bert_tiny_en_uncased`, `bert_base_en`,
  `all_minilm_l6_v2_en`, `bge_small_en`, ...): the Hugging Face repository
  that holds the same weights. keras-hub's own files live on Kaggle; ours are
  the Hugging Face originals they were converted from. Presets keras-hub has
  and we do not: `bert_tiny_en_uncased_sst2` (a keras-hub fine-tune with no
  Hugging Face original), `multilingual_e5_small` and `mxbai_embed_xsmall_v1_en`
  (tokenizers other than BERT's WordPiece `vocab.txt`);
- a ModernBERT preset (`modernbert_base_en`, `modernbert_large_en`) or its
  Hugging Face id (`answerdotai/ModernBERT-base`, `-large`): the backbone is a
  `ModernBertBackbone` (the repository's `model_type`), the tokenizer its
  `tokenizer.json` (`Tokenizer.from_pretrained`, `ModernBertTokenizer`);
- a Hugging Face id from the table (`google-bert/bert-base-uncased`, the 24
  small BERTs `google/bert_uncased_L-{2,...,12}_H-{128,...,768}_A-{2,...,12}`,
  `sentence-transformers/all-MiniLM-L6-v2`, ...), or its old short form
  (`bert-base-uncased`).

Any other Hub repository is read with `hf://owner/name`. The table only
names where the weights are; the weights and sizes come from the repository's
own config.json, so an entry cannot disagree with what loads.
"""

import dataclasses
import difflib


@dataclasses.dataclass(frozen=True)
class Preset:
    """One named checkpoint.

    Attributes:
        name: the preset name.
        hub_id: the Hugging Face repository ("owner/name").
        description: one line for `list_presets()`.
        lowercase: whether its tokenizer lowercases.
        num_layers, hidden_dim, num_heads: its size (the repository's config.json has the rest).
    """

    name: str
    hub_id: str
    description: str
    lowercase: bool
    num_layers: int
    hidden_dim: int
    num_heads: int

    @property
    def hub_path(self):
        return f"hf://{self.hub_id}"


# Google's BERT sizes by hidden width: (heads, what the BERT README calls them by layer count).
_SMALL_BERT_HEADS = {128: 2, 256: 4, 512: 8, 768: 12}
_SMALL_BERT_NAMES = {(2, 128): "BERT-Tiny", (4, 256): "BERT-Mini", (4, 512): "BERT-Small", (8, 512): "BERT-Medium",
                     (12, 768): "BERT-Base"}

# keras-hub name -> (Hugging Face id, description, lowercase, layers, hidden, heads), each row on two lines.
_KERAS_HUB = {
    "bert_tiny_en_uncased": ("google/bert_uncased_L-2_H-128_A-2",
                             "BERT-Tiny, English, uncased", True, 2, 128, 2),
    "bert_small_en_uncased": ("google/bert_uncased_L-4_H-512_A-8",
                              "BERT-Small, English, uncased", True, 4, 512, 8),
    "bert_medium_en_uncased": ("google/bert_uncased_L-8_H-512_A-8",
                               "BERT-Medium, English, uncased", True, 8, 512, 8),
    "bert_base_en_uncased": ("google-bert/bert-base-uncased",
                             "BERT-Base, English, uncased", True, 12, 768, 12),
    "bert_base_en": ("google-bert/bert-base-cased",
                     "BERT-Base, English, cased", False, 12, 768, 12),
    "bert_base_zh": ("google-bert/bert-base-chinese",
                     "BERT-Base, Chinese", False, 12, 768, 12),
    "bert_base_multi": ("google-bert/bert-base-multilingual-cased",
                        "BERT-Base, 104 languages, cased", False, 12, 768, 12),
    "bert_large_en_uncased": ("google-bert/bert-large-uncased",
                              "BERT-Large, English, uncased", True, 24, 1024, 16),
    "bert_large_en": ("google-bert/bert-large-cased",
                      "BERT-Large, English, cased", False, 24, 1024, 16),
    "all_minilm_l6_v2_en": ("sentence-transformers/all-MiniLM-L6-v2",
                            "MiniLM sentence embeddings, 6 layers", True, 6, 384, 12),
    "all_minilm_l6_v1_en": ("sentence-transformers/all-MiniLM-L6-v1",
                            "MiniLM sentence embeddings (v1), 6 layers", True, 6, 384, 12),
    "all_minilm_l12_v2_en": ("sentence-transformers/all-MiniLM-L12-v2",
                             "MiniLM sentence embeddings, 12 layers", True, 12, 384, 12),
    "paraphrase_minilm_l3_v2_en": ("sentence-transformers/paraphrase-MiniLM-L3-v2",
                                   "MiniLM paraphrase, 3 layers", True, 3, 384, 12),
    "paraphrase_minilm_l6_v2_en": ("sentence-transformers/paraphrase-MiniLM-L6-v2",
                                   "MiniLM paraphrase, 6 layers", True, 6, 384, 12),
    "paraphrase_minilm_l12_v2_en": ("sentence-transformers/paraphrase-MiniLM-L12-v2",
                                    "MiniLM paraphrase, 12 layers", True, 12, 384, 12),
    "multi_qa_minilm_l6_cos_v1_en": ("sentence-transformers/multi-qa-MiniLM-L6-cos-v1",
                                     "MiniLM semantic search (cosine), 6 layers", True, 6, 384, 12),
    "multi_qa_minilm_l6_dot_v1_en": ("sentence-transformers/multi-qa-MiniLM-L6-dot-v1",
                                     "MiniLM semantic search (dot product), 6 layers", True, 6, 384, 12),
    "msmarco_minilm_l6_cos_v5_en": ("sentence-transformers/msmarco-MiniLM-L6-cos-v5",
                                    "MiniLM MS MARCO retrieval, 6 layers", True, 6, 384, 12),
    "msmarco_minilm_l12_cos_v5_en": ("sentence-transformers/msmarco-MiniLM-L12-cos-v5",
                                     "MiniLM MS MARCO retrieval, 12 layers", True, 12, 384, 12),
    "bge_small_en": ("BAAI/bge-small-en",
                     "BGE small embeddings, English (v1)", True, 12, 384, 12),
    "bge_base_en": ("BAAI/bge-base-en",
                    "BGE base embeddings, English (v1)", True, 12, 768, 12),
    "bge_large_en": ("BAAI/bge-large-en",
                     "BGE large embeddings, English (v1)", True, 24, 1024, 16),
    "bge_small_v1.5_en": ("BAAI/bge-small-en-v1.5",
                          "BGE small embeddings, English (v1.5)", True, 12, 384, 12),
    "bge_base_v1.5_en": ("BAAI/bge-base-en-v1.5",
                         "BGE base embeddings, English (v1.5)", True, 12, 768, 12),
    "bge_large_v1.5_en": ("BAAI/bge-large-en-v1.5",
                          "BGE large embeddings, English (v1.5)", True, 24, 1024, 16),
    "bge_base_zh": ("BAAI/bge-base-zh",
                    "BGE base embeddings, Chinese (v1)", True, 12, 768, 12),
    "bge_large_zh": ("BAAI/bge-large-zh",
                     "BGE large embeddings, Chinese (v1)", True, 24, 1024, 16),
    "bge_small_v1.5_zh": ("BAAI/bge-small-zh-v1.5",
                          "BGE small embeddings, Chinese (v1.5)", True, 4, 512, 8),
    "bge_base_v1.5_zh": ("BAAI/bge-base-zh-v1.5",
                         "BGE base embeddings, Chinese (v1.5)", True, 12, 768, 12),
    "bge_large_v1.5_zh": ("BAAI/bge-large-zh-v1.5",
                          "BGE large embeddings, Chinese (v1.5)", True, 24, 1024, 16),
    "bge_llm_embedder": ("BAAI/llm-embedder",
                         "BGE embedder for retrieval-augmented LLMs", True, 12, 768, 12),
    "mxbai_embed_large_v1_en": ("mixedbread-ai/mxbai-embed-large-v1",
                                "mixedbread embeddings, large", True, 24, 1024, 16),
    "mxbai_embed_2d_large_v1_en": ("mixedbread-ai/mxbai-embed-2d-large-v1",
                                   "mixedbread 2D Matryoshka, large", True, 24, 1024, 16),
}

# Google's original releases on the Hub, beyond those keras-hub names: id -> (description, lowercase, L, H, A).
_GOOGLE_BERT = {
    "google-bert/bert-base-multilingual-uncased": ("BERT-Base, 102 languages, uncased", True, 12, 768, 12),
    "google-bert/bert-large-uncased-whole-word-masking": ("BERT-Large, whole-word masking, uncased", True, 24, 1024, 16),
    "google-bert/bert-large-cased-whole-word-masking": ("BERT-Large, whole-word masking, cased", False, 24, 1024, 16),
    "google-bert/bert-base-german-cased": ("BERT-Base, German, cased", False, 12, 768, 12),
}


# ModernBERT (Answer.AI and LightOn): keras-hub has no name for it yet, so its names follow keras-hub's pattern.
# `lowercase` False: its byte-level BPE keeps case (and has no casing option).
_MODERN_BERT = {
    "modernbert_base_en": ("answerdotai/ModernBERT-base",
                           "ModernBERT-base, English and code, 8,192 tokens", False, 22, 768, 12),
    "modernbert_large_en": ("answerdotai/ModernBERT-large",
                            "ModernBERT-large, English and code, 8,192 tokens", False, 28, 1024, 16),
}


def _build_table():
    table = {}
    for name, (hub_id, description, lowercase, layers, hidden, heads) in {**_KERAS_HUB, **_MODERN_BERT}.items():
        table[name] = Preset(name, hub_id, description, lowercase, layers, hidden, heads)
    for hub_id, (description, lowercase, layers, hidden, heads) in _GOOGLE_BERT.items():
        table[hub_id] = Preset(hub_id, hub_id, description, lowercase, layers, hidden, heads)
    for layers in (2, 4, 6, 8, 10, 12):
        for hidden, heads in _SMALL_BERT_HEADS.items():
            hub_id = f"google/bert_uncased_L-{layers}_H-{hidden}_A-{heads}"
            known = _SMALL_BERT_NAMES.get((layers, hidden))
            description = f"Google's small BERT, {layers} layers, hidden {hidden}, uncased" + (
                f" ({known})" if known else ""
            )
            table[hub_id] = Preset(hub_id, hub_id, description, True, layers, hidden, heads)
    # Every Hub id the keras-hub names point to is a name too.
    for preset in list(table.values()):
        table.setdefault(preset.hub_id, dataclasses.replace(preset, name=preset.hub_id))
    return table


PRESETS = _build_table()
# Hub ids from before the google-bert organisation: the Hub redirects them; we name the new repository.
ALIASES = {hub_id.split("/")[1]: hub_id for hub_id in PRESETS if hub_id.startswith("google-bert/")}


def list_presets():
    """The preset names `from_pretrained` / `from_preset` take, with what each is.

    Returns:
        A dict: preset name -> `{"hub_id", "description", "lowercase",
        "num_layers", "hidden_dim", "num_heads"}`, sorted by name.

    Examples:
    ```python
    sorted(keras_bert.list_presets())[:3]
    keras_bert.list_presets()["bert_base_en_uncased"]["hub_id"]  # 'google-bert/bert-base-uncased'
    ```
    """
    return {
        name: {field: getattr(preset, field) for field in
               ("hub_id", "description", "lowercase", "num_layers", "hidden_dim", "num_heads")}
        for name, preset in sorted(PRESETS.items())
    }


def find_preset(name):
    """The `Preset` called `name` (a preset name, a Hub id of the table, or an old short id), or None."""
    if not isinstance(name, str):
        return None
    name = ALIASES.get(name, name)
    return PRESETS.get(name)


def closest_presets(name, count=5):
    """The preset names most like `name` (difflib), best first; case is ignored."""
    by_lower = {}
    for candidate in list(PRESETS) + list(ALIASES):
        by_lower.setdefault(candidate.lower(), candidate)
    matches = difflib.get_close_matches(str(name).lower(), list(by_lower), n=count, cutoff=0.6)
    return [by_lower[match] for match in matches]


def looks_like_preset_name(location):
    """Whether a location that is no file is meant as a preset name, not a path.

    A bare word (no folder, no extension: "bert_base_uncased"), or a name
    close to a preset's (a mistyped Hub id such as "google-bert/bert-base-uncasd").
    """
    location = str(location)
    bare = "/" not in location and "\\" not in location and "." not in location.lstrip(".")
    return bare or bool(closest_presets(location, count=1))


def unknown_preset_error(location):
    """The ValueError for a name that is neither a file nor a preset: the closest names, and what to do."""
    closest = closest_presets(location)
    hint = f" Closest preset names: {', '.join(closest)}." if closest else ""
    return ValueError(
        f"{location!r} is not a file or folder, nor a preset name.{hint} keras_bert.list_presets() lists all "
        f"{len(PRESETS)}; any other Hugging Face repository loads as 'hf://owner/name'."
    )
