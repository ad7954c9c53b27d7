"""Wordpieces → words: which tokens make up each whitespace-separated word of the original text."""


def group_words(spans, fields, tokens):
    """The words of one sequence and the word each token belongs to.

    A word is a run of tokens of one field with no whitespace between them in
    the original text ("don't" and "movie." are one word each; "playing" cut
    into "play ##ing" is one word). A token without offsets (a tokenizer that
    gives none: `(field, None, None)`) is a word of its own, shown as its
    token string.

    Args:
        spans: per position, `(field, start, end)`, or None for [CLS], [SEP] and padding.
        fields: the input's texts.
        tokens: per position, the token string.

    Returns:
        `(words, word_of_token)`: `words` a list of dicts `{"text", "field",
        "start", "end"}` in order (`start`/`end` None without offsets), and
        per position the index of its word, or None.
    """
    words, word_of_token = [], []
    previous = None  # the last token's (field, end) when it had offsets
    for position, span in enumerate(spans):
        if span is None or span[1] is None:
            if span is not None:
                words.append({"text": tokens[position], "field": span[0], "start": None, "end": None})
            word_of_token.append(None if span is None else len(words) - 1)
            previous = None
            continue
        field, start, end = span
        gap = fields[field][previous[1] : start] if previous is not None and previous[0] == field else " "
        if previous is not None and not any(c.isspace() for c in gap):
            words[-1]["end"] = max(words[-1]["end"], end)
        else:
            words.append({"text": None, "field": field, "start": start, "end": end})
        word_of_token.append(len(words) - 1)
        previous = (field, max(end, previous[1]) if previous is not None and previous[0] == field else end)
    for word in words:
        if word["start"] is not None:
            word["text"] = fields[word["field"]][word["start"] : word["end"]]
    return words, word_of_token
