"""The Gardener's services: seeing the world's health, deciding, and asking the engine.

The Gardener runs beside the engine and never changes the world itself: it reads the
database, and its requests are judged and applied by the engine.
"""
