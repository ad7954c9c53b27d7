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
