"""Unused torch imports removed without libcst's scope analysis when no code reads what they bind, and with it
otherwise: the same result either way."""

from __future__ import annotations

import textwrap

import libcst as cst

from torch2ms.migrate.imports import localize, remove_unused, tidy

ROOTS = frozenset({"torch", "torchvision"})


def _remove(text: str, give_text: bool = True) -> tuple[str, list[str]]:
    module, removed = remove_unused(cst.parse_module(text), ROOTS, text if give_text else None)
    return module.code, removed


def test_nothing_reads_them_every_torch_import_goes_at_any_depth() -> None:
    text = textwrap.dedent("""\
        import os
        import torch  # the tensors
        import torch.nn as nn, torchvision
        from torch.nn import functional as F


        def load(path):
            from torch import load as torch_load
            return os.path.exists(path)
    """)
    code, removed = _remove(text)
    assert code == "import os\n\n\ndef load(path):\n    return os.path.exists(path)\n"
    assert sorted(removed) == ["functional", "load", "torch", "torch.nn", "torchvision"]
    full = _remove(text, give_text=False)  # libcst's scope analysis: the same
    assert (full[0], sorted(full[1])) == (code, sorted(removed))


def test_a_name_read_anywhere_or_in_a_string_annotation_means_the_scope_analysis_decides() -> None:
    text = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F


        def scale(x: "torch.Tensor", F=None):
            return F(x) if F else x
    """)
    code, removed = _remove(text)
    assert "import torch\n" in code  # kept for the string annotation
    assert "functional" not in code and removed == ["torch.nn.functional"]  # the parameter F shadows it
    assert _remove(text, give_text=False) == (code, removed)


def test_a_read_name_keeps_its_import() -> None:
    text = "import torch\nimport torch.nn as nn\n\nlayer = nn.Linear\n"
    code, removed = _remove(text)
    assert code == "import torch.nn as nn\n\nlayer = nn.Linear\n" and removed == ["torch"]


def _both(text: str) -> tuple[str, list[str], list[str]]:
    """`tidy`'s result, checked against `remove_unused` then `localize`, each with its own scope analysis."""
    module, removed, localized = tidy(cst.parse_module(text), ROOTS, text)
    apart, apart_removed = remove_unused(cst.parse_module(text), ROOTS, text)
    apart, apart_localized = localize(apart, ROOTS)
    assert (module.code, removed, localized) == (apart.code, apart_removed, apart_localized)
    return module.code, removed, localized


def test_one_scope_analysis_removes_and_moves_as_two_do() -> None:
    text = textwrap.dedent("""\
        import os
        from torch import load, save, tensor
        import torch.nn as nn


        class Net:
            def restore(self, path):
                \"\"\"Load the weights.\"\"\"
                return load(path)


        if os.name:
            def keep(x):
                return save(x, os.devnull)


        def scale(x):
            return x * 2
    """)
    code, removed, localized = _both(text)
    assert removed == ["tensor", "torch.nn"]
    assert localized == ["from torch import load, save"]
    assert code == textwrap.dedent("""\
        import os


        class Net:
            def restore(self, path):
                \"\"\"Load the weights.\"\"\"
                from torch import load, save
                return load(path)


        if os.name:
            def keep(x):
                from torch import load, save
                return save(x, os.devnull)


        def scale(x):
            return x * 2
    """)


def test_an_import_read_outside_functions_stays_and_a_nested_removal_walks_the_module() -> None:
    text = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        DEFAULT = torch.float32


        def build(x):
            import torchvision
            return nn.Identity()(x)
    """)
    code, removed, localized = _both(text)
    assert removed == ["torchvision"] and localized == ["import torch.nn as nn"]
    assert code == textwrap.dedent("""\
        import torch

        DEFAULT = torch.float32


        def build(x):
            import torch.nn as nn
            return nn.Identity()(x)
    """)


def test_imports_in_every_kind_of_block_are_found() -> None:
    text = textwrap.dedent("""\
        import os
        try:
            import torch
        except ImportError:
            import torchvision
        else:
            from torch import nn
        finally:
            import torch.nn.functional as F
        with open(os.devnull) as f:
            from torch import cat
        for i in range(2):
            import torch.cuda
        else:
            from torch import stack
        while False:
            from torch import zeros
        if os.name:
            from torch import ones
        elif os.sep:
            from torch import full
        match os.name:
            case "nt":
                from torch import eye
        class C:
            from torch import arange
        if os.name: import torch.fft
    """)
    code, removed = _remove(text, give_text=False)  # libcst's scope analysis, which `_imports` serves
    assert sorted(removed) == ["arange", "cat", "eye", "full", "nn", "ones", "stack", "torch", "torch.cuda",
                               "torch.fft", "torch.nn.functional", "torchvision", "zeros"]
    assert "torch" not in code and code.count("pass") == 13  # one in each block left empty
