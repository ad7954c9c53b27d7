"""The named BERT sizes (Turc et al., 2019, "Well-Read Students Learn Better", and Devlin et al., 2019)."""

# num_heads = hidden_dim / 64 throughout; intermediate_dim = 4 * hidden_dim.
BERT_SIZES = {
    "tiny": dict(num_layers=2, hidden_dim=128, num_heads=2, intermediate_dim=512),
    "mini": dict(num_layers=4, hidden_dim=256, num_heads=4, intermediate_dim=1024),
    "small": dict(num_layers=4, hidden_dim=512, num_heads=8, intermediate_dim=2048),
    "medium": dict(num_layers=8, hidden_dim=512, num_heads=8, intermediate_dim=2048),
    "base": dict(num_layers=12, hidden_dim=768, num_heads=12, intermediate_dim=3072),
    "large": dict(num_layers=24, hidden_dim=1024, num_heads=16, intermediate_dim=4096),
}
"""The named sizes of BERT: `{name: {num_layers, hidden_dim, num_heads, intermediate_dim}}`.

`tiny` (2 layers, 128 wide), `mini` (4, 256), `small` (4, 512), `medium` (8, 512), `base` (12, 768) and
`large` (24, 1024), with `num_heads = hidden_dim / 64` and `intermediate_dim = 4 * hidden_dim`.
`EncoderBackbone.from_size(name)` builds a randomly initialised backbone of one of them.

Examples:
    ```python
    keras_bert.BERT_SIZES["mini"]  # {"num_layers": 4, "hidden_dim": 256, "num_heads": 4, "intermediate_dim": 1024}
    backbone = keras_bert.BertBackbone.from_size("mini", vocabulary_size=8000)
    ```
"""
