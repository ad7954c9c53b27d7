"""Edits of a traced torch FX graph that the compiled step's rewrites share (random_ops, onednn_linear)."""


def swap_call(node, target, args, kwargs=None):
    """Puts a call of `target(*args, **kwargs)` where `node` was, keeping its metadata (shapes, dtypes)."""
    graph = node.graph
    with graph.inserting_before(node):
        new = graph.call_function(target, tuple(args), dict(kwargs or {}))
    new.meta = dict(node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)


def finish_rewrite(graph_module, replaced):
    """Checks and recompiles `graph_module` when `replaced` nodes changed; returns `replaced`."""
    if replaced:
        graph_module.graph.lint()
        graph_module.recompile()
    return replaced
