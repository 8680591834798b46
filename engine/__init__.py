"""The simulation engine: the phased tick pipeline and the runner thread (issue 5).

Empty until the engine lands; the package exists so the layer contracts cover it.
"""
