"""The human interface: the observer API and the Textual TUI (issue 7).

Empty until then; it sits at the top of the layer contracts.
"""
