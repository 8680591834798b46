"""Edges to the outside: language models, perception text, agents' home folders and
tracing (issues 5 and 6). Empty until then; the layer contracts already cover it.
"""
