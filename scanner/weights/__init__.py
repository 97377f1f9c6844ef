"""Weights of ported models: the tables' weight facts, parameter-name maps, conversion.

Importing this package imports neither torch nor MindSpore.
"""
