"""World generation: WFC terrain, landmarks and agent placement (issue 3).

Empty until then; the layer contracts already keep it independent of storage and config.
"""
