"""Hearth's pure domain: values and rules with no I/O.

Nothing in this package touches files, the network, a database, a clock or an
event loop. Every value is immutable; every transformation returns a new value.
That keeps the rules of the world testable in microseconds and lets every other
layer trust what it is handed.
"""
