"""The port check: the output of a port (and any MindSpore code) read as MindSpore code (TMS4xx).

`api.py` holds MindSpore's public API as data; docs/port-check.md describes the checks.
"""
