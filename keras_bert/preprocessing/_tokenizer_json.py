"""A Hugging Face `tokenizer.json` of a byte-level BPE, read into `BytePairTokenizer`'s arguments.

What the `tokenizers` library (what transformers 5 runs for RoBERTa, and for
ModernBERT through `TokenizersBackend`) does with such a file, and what is
read here for it:

- `added_tokens`: cut out of the text before anything else, each with its
  flags: `special` (kept whole only while special tokens are honoured),
  `lstrip` / `rstrip` (the match takes the whitespace before / after it),
  `normalized` (matched on the normalized text, after the normalizer; else on
  the raw text, before it);
- `normalizer`: none, or one Unicode normalization form (GPT-NeoX-style
  vocabularies apply NFC);
- `pre_tokenizer`: `ByteLevel` with `add_prefix_space` (a space before each
  piece of text that does not start with one) and `use_regex` (GPT-2's split
  into words; without it each piece is one word). Its `trim_offsets` does
  nothing there (the `tokenizers` library trims in post-processors only);
- `model`: the BPE vocabulary and merges;
- `post_processor`: where `[CLS]`/`[SEP]` go, as the layout of
  `BertInputPacker` (`separators_between`, `typed_segments`), and whether
  offsets are trimmed of the spaces at a token's ends (`trim_offsets` of a
  `RobertaProcessing` or `ByteLevel` processor; offsets only, not ids).

Anything else that would change the ids (BPE dropout, byte fallback,
`ignore_merges`, single-word added tokens, other normalizers and
pre-tokenizers) is refused by name rather than silently tokenized otherwise.
Pure Python: no TensorFlow here.
"""

import json

UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
ADDED_TOKEN_FLAGS = ("special", "lstrip", "rstrip", "normalized")


def read_tokenizer_json(path):
    """`tokenizer.json` → `(arguments, layout)`.

    Args:
        path: the file.

    Returns:
        `arguments`: `BytePairTokenizer` constructor arguments (`vocabulary`
        with the added tokens in it, `merges`, `added_tokens`,
        `unicode_normalization`, `add_prefix_space`, `use_regex`,
        `trim_offsets`);
        `layout`: the post-processor's layout (see `pair_layout`), or None
        when the file has no post-processor.

    Raises:
        ValueError: naming the file and what in it is not a byte-level BPE
            this package tokenizes exactly.
    """
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    vocabulary, merges = _bpe_model(spec.get("model") or {}, path)
    added_tokens = _added_tokens(spec.get("added_tokens") or [], vocabulary, path)
    arguments = {
        "vocabulary": vocabulary,
        "merges": merges,
        "added_tokens": added_tokens,
        "unicode_normalization": _normalization(spec.get("normalizer"), path),
        **_byte_level(spec.get("pre_tokenizer"), path),
        "trim_offsets": _trim_offsets(spec.get("post_processor")),
    }
    return arguments, pair_layout(spec.get("post_processor"), vocabulary, path)


def _refuse(path, what):
    raise ValueError(f"{path}: {what}; BytePairTokenizer cannot tokenize it as the `tokenizers` library does.")


def _bpe_model(model, path):
    if model.get("type") != "BPE":
        raise ValueError(f"{path} holds no BPE model (type {model.get('type')!r}).")
    for option, harmless in (
        ("dropout", (None, 0, 0.0)),
        ("continuing_subword_prefix", (None, "")),
        ("end_of_word_suffix", (None, "")),
        ("byte_fallback", (None, False)),
        ("ignore_merges", (None, False)),
    ):
        if model.get(option) not in harmless:
            _refuse(path, f"its BPE model sets {option}={model[option]!r}")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return dict(model.get("vocab", {})), merges


def _added_tokens(entries, vocabulary, path):
    """The added tokens, each `{"content", "special", "lstrip", "rstrip", "normalized"}`, put into `vocabulary`.

    The `tokenizers` library does not take an added token's id from the
    file: it gives the BPE's id to a token the BPE vocabulary holds, else
    the next id after the BPE vocabulary and the tokens added before (and
    only warns when the file says otherwise). A file whose ids are not
    those is refused, naming the token.
    """
    model_size, tokens, assigned = len(vocabulary), [], {}
    for entry in entries:
        content = entry["content"]
        if entry.get("single_word"):
            _refuse(path, f"the added token {content!r} is single_word (matched only as a whole word)")
        if content in vocabulary or content in assigned:
            token_id = vocabulary.get(content, assigned.get(content))
        else:
            top = max(assigned.values(), default=-1)
            token_id = top + 1 if top >= model_size else model_size
        if entry["id"] != token_id:
            raise ValueError(
                f"{path}: the added token {content!r} has id {entry['id']} in the file, but the `tokenizers` "
                f"library gives it id {token_id}."
            )
        assigned[content] = token_id
        tokens.append({"content": content, **{flag: bool(entry.get(flag, False)) for flag in ADDED_TOKEN_FLAGS}})
    vocabulary.update(assigned)
    ids = {}
    for token, token_id in vocabulary.items():
        if ids.setdefault(token_id, token) != token:
            raise ValueError(f"{path}: id {token_id} is given to both {ids[token_id]!r} and {token!r}.")
    return tokens


def _flatten(spec, key):
    """A `Sequence` of normalizers / pre-tokenizers / processors as a list; one of them as a list of one."""
    if spec is None:
        return []
    if spec.get("type") == "Sequence":
        return [part for inner in spec.get(key, []) for part in _flatten(inner, key)]
    return [spec]


def _normalization(spec, path):
    """The Unicode normalization form the normalizer applies, or None."""
    parts = _flatten(spec, "normalizers")
    types = [part.get("type") for part in parts]
    if not parts:
        return None
    if len(parts) == 1 and types[0] in UNICODE_FORMS:
        return types[0]
    _refuse(path, f"its normalizer is {' + '.join(map(str, types))} (supported: none, or one of {UNICODE_FORMS})")


def _byte_level(spec, path):
    """`add_prefix_space` and `use_regex` of the `ByteLevel` pre-tokenizer."""
    parts = _flatten(spec, "pretokenizers")
    if len(parts) != 1 or parts[0].get("type") != "ByteLevel":
        types = " + ".join(str(part.get("type")) for part in parts) or "none"
        _refuse(path, f"its pre-tokenizer is {types}, not ByteLevel")
    return {
        "add_prefix_space": bool(parts[0].get("add_prefix_space", False)),
        "use_regex": bool(parts[0].get("use_regex", True)),
    }


def _trim_offsets(spec):
    """Whether the post-processor trims offsets: any `RobertaProcessing` or `ByteLevel` in it that says so."""
    return any(
        part.get("type") in ("RobertaProcessing", "ByteLevel") and bool(part.get("trim_offsets", True))
        for part in _flatten(spec, "processors")
    )


def _template_items(template, special_tokens, vocabulary, path):
    """A TemplateProcessing template → `[(token or "A" / "B", type id), ...]`, each special token checked."""
    items = []
    for piece in template:
        ((kind, value),) = piece.items()
        if kind == "Sequence":
            items.append((value["id"], value["type_id"]))
            continue
        entry = special_tokens.get(value["id"], {})
        if entry.get("tokens") != [value["id"]] or entry.get("ids") != [vocabulary.get(value["id"])]:
            raise ValueError(
                f"{path}: the post-processor's special token {value['id']!r} is {entry.get('tokens')} with ids "
                f"{entry.get('ids')}; expected the one token with its vocabulary id {vocabulary.get(value['id'])}."
            )
        items.append((value["id"], value["type_id"]))
    return items


def _templates(processor, vocabulary, path):
    """`(single, pair)` templates as item lists, from any of the three processors that place [CLS]/[SEP]."""
    kind = processor.get("type")
    if kind == "TemplateProcessing":
        special = processor.get("special_tokens", {})
        return tuple(_template_items(processor[k], special, vocabulary, path) for k in ("single", "pair"))
    if kind in ("BertProcessing", "RobertaProcessing"):
        (cls, cls_id), (sep, sep_id) = processor["cls"], processor["sep"]
        if (vocabulary.get(cls), vocabulary.get(sep)) != (cls_id, sep_id):
            raise ValueError(f"{path}: the {kind} post-processor's ids of {cls!r} / {sep!r} are not the vocabulary's.")
        if kind == "BertProcessing":
            return [(cls, 0), ("A", 0), (sep, 0)], [(cls, 0), ("A", 0), (sep, 0), ("B", 1), (sep, 1)]
        return [(cls, 0), ("A", 0), (sep, 0)], [(cls, 0), ("A", 0), (sep, 0), (sep, 0), ("B", 0), (sep, 0)]
    _refuse(path, f"its post-processor is {kind}")


def pair_layout(spec, vocabulary, path):
    """Where the post-processor puts the special tokens, as `BertInputPacker`'s layout.

    Args:
        spec: the `post_processor` of a `tokenizer.json` (None: none).
        vocabulary: dict token → id, the added tokens in it.
        path: the file, for messages.

    Returns:
        None without a post-processor, else a dict: `cls` and `sep` (the
        token strings), `separators_between` (1: `[CLS] A [SEP] B [SEP]`, 2:
        `<s> A </s></s> B </s>`) and `typed_segments` (whether B and its
        closing separator have type id 1).

    Raises:
        ValueError: a template the packer cannot build (another order,
            other tokens, type ids elsewhere), naming it.
    """
    processors = [p for p in _flatten(spec, "processors") if p.get("type") != "ByteLevel"]  # ByteLevel: offsets only
    if not processors:
        return None
    if len(processors) > 1:
        _refuse(path, f"its post-processor is {' + '.join(p.get('type') for p in processors)}")
    single, pair = _templates(processors[0], vocabulary, path)
    if len(single) == 3:
        cls, sep = single[0][0], single[2][0]
        first = [(cls, 0), ("A", 0), (sep, 0)]
        for separators in (1, 2):
            for typed in (False, True):
                # The packer types B and its closing separator, never RoBERTa's second separator.
                second = [(sep, 0)] * (separators - 1) + [("B", int(typed)), (sep, int(typed))]
                if single == first and pair == first + second:
                    return {"cls": cls, "sep": sep, "separators_between": separators, "typed_segments": typed}
    shown = " / ".join(" ".join(f"{t}:{type_id}" for t, type_id in template) for template in (single, pair))
    raise ValueError(
        f"{path}: the post-processor's template {shown} is not a layout BertInputPacker builds "
        "(CLS $A SEP, and CLS $A SEP [SEP] $B SEP with $B typed 0 or 1)."
    )
