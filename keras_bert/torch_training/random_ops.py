"""Dropout written as `rand >= p`, so that inductor fuses it into one loop and draws with torch's fast generator.

Why: inductor lowers `aten.dropout` (and the dropout inside
`scaled_dot_product_attention`'s math path) to its own per-element Philox
generator, which on this CPU was slower than eager torch: a 1M-element
dropout took 11.2 ms compiled against 5.1 ms eager (2026-11-29, one thread).
With `fallback_random=True` inductor keeps `aten.rand` (torch's default
generator, 2.0 ms for 1M numbers) and fuses the compare, the mask and the
scaling around it: 2.4 ms. `rewrite_random_ops` swaps the exported training
graph's dropout nodes for these functions before compiling.

The draws come from torch's default generator, as Keras' unseeded `Dropout`
and the package's fused attention dropout do on torch, so
`keras.utils.set_random_seed` and the jobs' saved random state
(`keras_bert.jobs.random_state`) fix them the same way. The masks are not
the eager ones (eager draws with `bernoulli_`): the same seed gives other
masks, with the same keep probability and scaling.
"""

import math

from keras_bert.torch_training._graph_edits import finish_rewrite, swap_call


def dropout(x, p, train):
    """`torch.nn.functional.dropout(x, p, training=train)`: keep with probability `1 - p`, scale by `1 / (1 - p)`."""
    import torch  # deferred: the functions run only in torch graphs

    if not train or p == 0.0:
        return x
    if p == 1.0:
        return torch.zeros_like(x)
    # Drawn in float32 whatever x's dtype: a bfloat16 uniform has 8 bits, which would move the keep probability.
    keep = torch.rand(x.shape, dtype=torch.float32, device=x.device) >= p
    return x * keep * (1.0 / (1.0 - p))


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """`scaled_dot_product_attention` with dropout, as torch's math path computes it, with `dropout` above.

    torch's CPU flash kernel takes no dropout, so eager torch runs this math
    path too: float32 for half-precision inputs, the scale split between query
    and key, a safe softmax (a query with no key left gets zeros, not NaN).

    query: `(batch, heads, seq_q, head_dim)`; key, value: `(batch, heads, seq_k, head_dim)`;
    attn_mask: bool (True: attend) or additive float, broadcastable to `(batch, heads, seq_q, seq_k)`.
    """
    import torch  # deferred: the functions run only in torch graphs

    if not dropout_p or is_causal or enable_gqa:
        return torch.ops.aten.scaled_dot_product_attention.default(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
        )
    dtype = query.dtype
    if dtype in (torch.float16, torch.bfloat16):
        query, key, value = query.float(), key.float(), value.float()
    root_scale = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    logits = torch.matmul(query * root_scale, key.transpose(-2, -1) * root_scale)  # (batch, heads, seq_q, seq_k)
    if attn_mask is not None:
        logits = logits.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else logits + attn_mask
    probs = dropout(torch.ops.aten._safe_softmax.default(logits, -1), dropout_p, True)
    return torch.matmul(probs, value).to(dtype)


def rewrite_random_ops(graph_module):
    """Replaces `aten.dropout` and dropping `aten.scaled_dot_product_attention` nodes with the functions above.

    Returns:
        The number of nodes replaced (the graph module is changed in place and recompiled).
    """
    import torch  # deferred: the functions run only in torch graphs

    replacements = {
        torch.ops.aten.dropout.default: dropout,
        torch.ops.aten.scaled_dot_product_attention.default: attention,
    }
    graph = graph_module.graph
    replaced = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in replacements:
            continue
        swap_call(node, replacements[node.target], node.args, node.kwargs)
        replaced += 1
    return finish_rewrite(graph_module, replaced)
