"""torch2ms: PyTorch to MindSpore migration scanner."""

__version__ = "0.1.0"
