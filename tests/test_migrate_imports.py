"""Unused torch imports removed without libcst's scope analysis when no code reads what they bind, and with it
otherwise: the same result either way."""

from __future__ import annotations

import textwrap

import libcst as cst

from torch2ms.migrate.imports import remove_unused

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


def test_an_import_functions_still_use_stays_at_module_level() -> None:
    """Nothing is moved into a function to hide torch: an import that code still uses (a function, a method, a
    module-level name) stays where it was, and only what nothing reads goes."""
    text = textwrap.dedent("""\
        import os
        from torch import load, save, tensor
        import torch.nn as nn


        class Net:
            def restore(self, path):
                return load(path)


        if os.name:
            def keep(x):
                return save(x, os.devnull)


        def scale(x):
            import torchvision
            return x * 2
    """)
    code, removed = _remove(text)
    assert sorted(removed) == ["tensor", "torch.nn", "torchvision"]
    assert code.startswith("import os\nfrom torch import load, save\n\n\nclass Net:\n")
    assert "from torch" not in code.split("class Net:")[1]  # nothing moved into a function
    assert _remove(text, give_text=False) == (code, removed)
