"""The fixes: a core (`fixer.Fixer`, the parameter edits of `param_edits.py`, the edit builder of
`edits.py`) and a registry of small transforms (`base.REGISTRY`), one module each, for the rewrites that
the tables' facts cannot express and that the tables name (``rewrite: {transform: NAME, ...}``)."""

from __future__ import annotations

from . import (  # noqa: F401  (each module registers its transform)
    attribute_result, called_argument, called_attribute, cell, complex_abs, compose, custom_gradient, device_move, device_object, dropped_call, dropped_decorator,
    fill_dtype, legacy_tensor, python_name, python_value, result_fields, result_form, result_method, set_train_false,
    shape_attribute, shape_tuple, size_tuple, support, training_mode,
)
from .base import FIXABLE_CODES, REGISTRY, Context, Transform
from .edits import IMPORT_LINE, EditBuilder
from .fixer import Fixer, build_fix
from .param_edits import default_keyword, result_dtype

__all__ = ["FIXABLE_CODES", "IMPORT_LINE", "REGISTRY", "Context", "EditBuilder", "Fixer", "Transform", "build_fix",
           "default_keyword", "result_dtype"]
