"""Unused torch imports removed without libcst's scope analysis when no code reads what they bind, and with it
otherwise: the same result either way."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import ImportAssignment, MetadataWrapper, ScopeProvider

from torch2ms.migrate.imports import _referenced_by_names, remove_unused

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


# Programs where the names an import binds are read, shadowed or only mentioned in the ways Python's scoping
# rules tell apart: (program, whether the syntax tree alone decides every import of torch). Where it does,
# its answer must be the scope analysis's; where it does not, the scope analysis decides.
SCOPING = [
    ("import torch\n\ndef f(x):\n    return torch.relu(x)\n", True),  # a function reads the module's name
    ("import torch\n\nclass A:\n    kind = torch.float32\n", True),  # a class body reads it
    ("import torch\n\nlimits = [torch.finfo(t) for t in (1, 2)]\n", True),  # a comprehension's element
    ("import torch\n\nvalues = [x for x in torch.arange(3)]\n", False),  # the first iterable: the module's scope
    ("import torch\n\nf = lambda x=torch.ones(1): x\n", False),  # a default value: the module's scope
    ("import torch\n\n@torch.no_grad()\ndef f(x):\n    return x\n", False),  # a decorator: the module's scope
    ("import torch\n\ndef f(x: torch.Tensor):\n    return x\n", False),  # an annotation: the module's scope
    ('import torch\n\ndef f(x):\n    """Like torch.relu."""\n    return x\n', True),  # a docstring only: unused
    ("import torch\n\ndef f(x):\n    # torch.relu\n    return x\n", True),  # a comment only: unused
    ('import torch\n\ndef f(x):\n    print("needs torch")\n    return x\n', False),  # a string may be an annotation
    ("import torch\n\ndef f(torch):\n    return torch.relu(1)\n", False),  # a parameter shadows it: unused
    ("import torch\n\ndef f():\n    global torch\n    return torch\n", False),
    ("import torch\nimport torch.nn\n\ndef f():\n    return torch.nn.ReLU()\n", False),  # a read of torch.nn
    ("def f(x):\n    import torch\n    return torch.relu(x)\n", False),  # an import in a function
    ("import torch\n\ndef f():\n    torch = 1\n\n    class A:\n        def g(self):\n            return torch\n"
     "    return A\n", False),  # the outer function's own torch
    ('import torch\n\ndef f(x):\n    return f"{torch.float32}"\n', True),  # read inside an f-string
    ("import torch\n\ndef f(r):\n    return [(torch := i) for i in r], torch\n", False),  # bound by a walrus
    ("import torch\n\ndef f():\n    try:\n        pass\n    except ValueError as torch:\n        return torch\n", False),
    ("from torch import nn as layers, relu\n\nclass Net:\n    def build(self):\n        return layers.Linear(1, 1)\n",
     True),  # relu: written nowhere, unused; layers: read in a method
    ("import torch.nn.functional as F\nimport torch\n\ndef f(x):\n    return F.relu(x)\n", True),
    ("import torch\n\nif torch:\n    def f():\n        return torch.ones(1)\n", True),  # read in f all the same
    ("import torch\ntorch = None\n\ndef f():\n    return torch\n", True),  # the read reaches both bindings
    ("import torch\n\ndef f():\n    del torch\n", False),
    ("import torch\n\nclass A:\n    torch = 1\n\n    def g(self):\n        return torch.ones(1)\n", False),
]


@pytest.mark.parametrize("text, decided", SCOPING)
def test_the_syntax_tree_decides_only_what_the_scope_analysis_would(text: str, decided: bool) -> None:
    module = cst.parse_module(text)
    answer = _referenced_by_names(module, ast.parse(text), ROOTS)
    assert (answer is not None) is decided
    assert _remove(text) == _remove(text, give_text=False)
    if answer is None:
        return
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    full: dict[tuple[int, str], bool] = {}
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for assignment in scope.assignments:
            if isinstance(assignment, ImportAssignment):
                key = (id(assignment.node), assignment.name)
                full[key] = full.get(key, False) or bool(assignment.references)
    assert answer and all(full[key] == used for key, used in answer.items())
