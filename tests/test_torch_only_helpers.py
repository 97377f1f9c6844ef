"""Torch-only helpers in ported code: queries about torch's compiler or tracer become their fixed value and
decorators that only steer torch's compiler or tracer go (transforms python_value and dropped_decorator,
named by the tables). The programs here are written the way many libraries write these constructs."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

ROOT = Path(__file__).resolve().parent.parent

GATED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def checkpointed(fn, x):
        return fn(x)


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)
            self.grad_checkpointing = False

        @torch.jit.unused
        def export_names(self):  # only for tools
            return ["proj"]

        @torch.jit.export
        def width(self) -> int:
            return 8

        def forward(self, x):
            if self.grad_checkpointing and not torch.jit.is_scripting():
                return checkpointed(self.proj, x)
            if torch.jit.is_tracing() or torch.compiler.is_exporting():
                return self.proj(x) * 1.0
            return self.proj(x)
""")

WRAPPED = textwrap.dedent("""\
    import torch
    from torch import nn


    @torch.fx.wrap
    def rotate(x, k: int):
        return x.flip(-1) if k else x


    class Rotary(nn.Module):
        def forward(self, x):
            return rotate(x, 1)
""")


def _port(text: str) -> str:
    return migrate_text(text, "model.py", table=load_table()).text


def test_compiler_and_tracer_queries_become_false() -> None:
    ported = _port(GATED)
    assert "if self.grad_checkpointing and not False:" in ported
    assert "if False or False:" in ported
    assert "is_scripting" not in ported and "is_tracing" not in ported and "is_exporting" not in ported


def test_torchscript_decorators_go_with_their_lines_and_the_methods_stay() -> None:
    ported = _port(GATED)
    assert "@" not in ported
    assert "    def export_names(self):  # only for tools\n" in ported
    assert "    def width(self) -> int:\n" in ported
    assert "import torch" not in ported  # nothing torch is left for an import to serve


def test_a_tracing_wrapper_on_a_module_function_goes() -> None:
    ported = _port(WRAPPED)
    assert "@torch.fx.wrap" not in ported and "fx" not in ported
    assert ported.count("\ndef rotate(x, k: int):\n") == 1
    assert "import torch" not in ported


def test_a_decorator_sharing_its_line_stays_with_its_finding() -> None:
    text = "import torch\n\n\nclass A:\n    @torch.jit.ignore\n    def f(self):\n        return 1\n\n\n" \
           "def g():\n    return torch.jit.ignore(lambda: 2)\n"
    migration = migrate_text(text, "util.py", table=load_table())
    assert "    def f(self):" in migration.text and "@torch.jit.ignore" not in migration.text
    assert "torch.jit.ignore(lambda: 2)" in migration.text  # a call, not a decorator: left, and reported
    assert any(d.torch_api == "torch.jit.ignore" for d in migration.result.diagnostics)


def test_no_rule_names_a_model_library() -> None:
    """The rules are general: neither the code nor the tables name the model library the benchmarks port."""
    names = re.compile(r"\btimm\b|create_model|Conv2dSame|LayerNorm2d|vision_transformer|DropPath", re.I)
    places = [*sorted((ROOT / "src" / "torch2ms").rglob("*.py")), *sorted((ROOT / "src" / "torch2ms").rglob("*.yaml")),
              *sorted((ROOT / "scripts").glob("*.yaml")), *sorted((ROOT / "scripts").glob("*.py"))]
    assert len(places) > 50
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in places
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if names.search(line)]
    assert hits == []


FINAL = textwrap.dedent("""\
    import typing
    import torch
    from torch import nn
    from torch.jit import Final


    class Pool(nn.Module):
        flatten: Final[bool]
        mode: torch.jit.Final[str]

        def __init__(self, flatten: bool = True):
            super().__init__()
            self.flatten = flatten
            self.mode = "avg"

        def forward(self, x: typing.Any):
            return x.mean((2, 3)) if self.flatten else x
""")


def test_torchscript_final_becomes_typing_final_imported_once() -> None:
    ported = _port(FINAL)
    assert "    flatten: typing.Final[bool]\n    mode: typing.Final[str]\n" in ported
    assert ported.count("import typing\n") == 1
    assert "torch" not in ported.replace("mindspore", "")


def test_final_is_imported_where_the_file_lacks_typing() -> None:
    ported = _port(FINAL.replace("import typing\n", "").replace("typing.Any", "object"))
    assert ported.count("import typing\n") == 1 and "flatten: typing.Final[bool]" in ported
    tree = ast.parse(ported)
    assert any(isinstance(n, ast.Import) and n.names[0].name == "typing" for n in tree.body)


PLACED = textwrap.dedent("""\
    from typing import Optional, Union
    import torch


    def describe(shape: torch.Size, device: Optional[Union[str, torch.device]] = None) -> str:
        if isinstance(shape, torch.Size):
            return f"{len(shape)}-d on {device or 'the default device'}"
        return "not a shape"
""")


def test_device_and_shape_types_become_the_plain_types_of_their_values() -> None:
    """torch.device named as a type is a str (torch.device("cuda") becomes "cuda"), torch.Size a tuple (what
    MindSpore's Tensor.shape is): annotations and isinstance checks hold for the port's values, without torch."""
    ported = _port(PLACED)
    assert "def describe(shape: tuple, device: Optional[Union[str, str]] = None) -> str:" in ported
    assert "isinstance(shape, tuple)" in ported and "torch" not in ported
    namespace: dict[str, object] = {}
    exec(compile(ported, "describe.py", "exec"), namespace)
    describe = namespace["describe"]
    assert callable(describe)
    assert describe((2, 3), "CPU") == "2-d on CPU" and describe([2, 3]) == "not a shape"


PROBED = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F
    from torch import nn

    FUSED = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    GROUPED_MM = hasattr(torch.nn.functional, "scaled_grouped_mm")
    NATIVE_RMS = hasattr(F, 'rms_norm')
    EXPORTING = hasattr(torch, "compiler") and hasattr(torch.compiler, "is_exporting")
    no_compile = getattr(getattr(torch, "compiler", None), "disable", None) or (lambda fn: fn)
    silu = getattr(F, "silu", None)
    glu = getattr(F, "glu", None)
    scripting = getattr(torch.jit, "is_scripting", None)


    def attention(q, k, v):
        if GROUPED_MM:
            return F.scaled_grouped_mm(q, k)
        if FUSED:
            return F.scaled_dot_product_attention(q, k, v)
        return (q @ k.transpose(-2, -1)).softmax(-1) @ v
""")


def test_feature_probes_on_torch_are_answered_from_the_tables() -> None:
    """hasattr/getattr on a torch module: a name the port writes something for is there (a MindSpore target,
    or a rewrite of its own), any other is not; getattr gives the target or its default."""
    table = load_table()
    missing = table.lookup("torch.nn.functional.scaled_grouped_mm")
    composed = table.lookup("torch.nn.functional.scaled_dot_product_attention")
    rms = table.lookup("torch.nn.functional.rms_norm")
    assert missing is not None and not missing.targets and missing.rewrite is None  # the facts used
    assert composed is not None and not composed.targets and composed.rewrite is not None
    assert rms is not None and rms.targets
    ported = _port(PROBED)
    assert 'FUSED = True\nGROUPED_MM = False\nNATIVE_RMS = True\nEXPORTING = False and True\n' in ported
    assert 'no_compile = getattr(None, "disable", None) or (lambda fn: fn)' in ported
    assert "glu = mindspore.mint.nn.functional.glu\n" in ported  # the same arguments: the target itself
    # a function whose in-place calls a composed form serves: the value the support module's in_place gives
    assert "silu = functools.partial(t2ms_support.in_place, mindspore.mint.nn.functional.silu, 1)\n" in ported
    assert 'scripting = getattr(torch.jit, "is_scripting", None)' in ported  # only a rewrite serves it: stays
    assert "    if GROUPED_MM:\n        return F.scaled_grouped_mm(q, k)" in ported  # a branch never taken
    assert "    if FUSED:\n        return (lambda q, k, v, m, d, c, s, g:" in ported  # composed where the port has it


FUSED_FALLBACK = textwrap.dedent("""\
    import torch


    def blend_into(dst, src, weight, exact):
        if hasattr(torch, "_no_such_fused_blend_"):
            torch._no_such_fused_blend_(dst, src, weight)
        else:
            # the portable path
            for d, s in zip(dst, src):
                d.copy_(d + (s - d) * weight)  # one tensor at a time
        if exact is not None and hasattr(torch, "_no_such_fused_copy_"):
            torch._no_such_fused_copy_(dst, src)
        else:
            return dst
        if exact and hasattr(torch, "_no_such_fused_copy_"):
            torch._no_such_fused_copy_(dst, src)
        elif exact:
            return src
        if blend_into(dst, src, weight, None) and hasattr(torch, "_no_such_fused_copy_"):
            torch._no_such_fused_copy_(dst, src)
        else:
            return None
""")


def test_a_branch_only_a_missing_torch_name_takes_leaves_its_else_block() -> None:
    """`if hasattr(torch, "x"): ... else: ...` (or `flag and hasattr(...)` where the flag runs nothing) answered
    False: the else block stands in its place, comments kept; an `elif` chain or a test that calls something
    stays as it is (its torch use reported)."""
    ported = _port(FUSED_FALLBACK)
    assert ("def blend_into(dst, src, weight, exact):\n    # the portable path\n    for d, s in zip(dst, src):\n"
            "        d.copy_(d + (s - d) * weight)  # one tensor at a time\n    return dst\n"
            "    if exact and False:\n") in ported
    assert "    if blend_into(dst, src, weight, None) and False:\n        torch._no_such_fused_copy_" in ported


ANNOTATED = textwrap.dedent("""\
    from torch.jit.annotations import Dict, List, Optional, Tuple
    import torch


    def bucket(rows: List[torch.Tensor], names: Optional[Dict[str, int]] = None) -> Tuple[int, int]:
        width = max(r.shape[-1] for r in rows)
        return len(rows), width
""")


def test_typing_names_through_torch_jit_annotations_become_typing_names() -> None:
    """torch.jit.annotations re-exports typing's generics (older TorchScript code imports them from there): the
    port spells them from typing, imports typing once and no longer imports torch."""
    ported = _port(ANNOTATED)
    assert "def bucket(rows: typing.List[mindspore.Tensor], names: typing.Optional[typing.Dict[str, int]] = None) " \
           "-> typing.Tuple[int, int]:" in ported
    assert ported.count("import typing\n") == 1
    assert "torch" not in ported.replace("mindspore", "")


UNTYPED = textwrap.dedent("""\
    from dataclasses import dataclass, field
    from typing import Optional
    import torch.nn.functional as F
    import torch.multiprocessing as tmp


    @dataclass
    class Resize:
        mode: F = "bilinear"
        pool: Optional[tmp.Queue] = field(default=None)


    def resize_mode(config: Resize, fallback: str = "nearest", queue: Optional[tmp.Queue] = None) -> F:
        return config.mode or fallback
""")


def test_torch_names_left_in_annotations_become_typing_any() -> None:
    """A torch module or class named only in annotations (no MindSpore type for it) is written as typing.Any:
    the torch import goes with it and the port runs without torch; other names of the annotation stay."""
    migration = migrate_text(UNTYPED, "resize.py", table=load_table())
    ported = migration.text
    assert "    mode: typing.Any = \"bilinear\"\n    pool: Optional[typing.Any] = field(default=None)\n" in ported
    assert "def resize_mode(config: Resize, fallback: str = \"nearest\", queue: Optional[typing.Any] = None) " \
           "-> typing.Any:" in ported
    assert ported.count("import typing\n") == 1
    assert not [n for n in ast.walk(ast.parse(ported)) if isinstance(n, (ast.Import, ast.ImportFrom))
                and any(a.name.startswith("torch") or (getattr(n, "module", None) or "").startswith("torch")
                        for a in n.names)]
    assert any("torch.nn.functional in an annotation -> typing.Any" in note for note in migration.notes)
    namespace: dict[str, object] = {}
    exec(compile(ported, "resize.py", "exec"), namespace)
    resize, pick = namespace["Resize"], namespace["resize_mode"]
    assert callable(resize) and callable(pick)
    assert pick(resize()) == "bilinear" and pick(resize(mode="")) == "nearest"


FALLBACK = textwrap.dedent("""\
    import math
    try:
        from torch import _assert
    except ImportError:
        def _assert(condition: bool, message: str):
            assert condition, message
    try:
        import torch.nn.functional as F
        from torch.nn.functional import gelu as _fast_gelu  # noqa
    except (ImportError, AttributeError):
        _fast_gelu = None
    finally:
        READY = True
    try:
        from torch import _assert_async
    except RuntimeError:
        _assert_async = None
    try:
        from torch.utils.tensorboard import SummaryWriter
        HAS_BOARD = True
    except ImportError:
        HAS_BOARD = False


    def board(folder):
        return SummaryWriter(folder) if HAS_BOARD else None

    HAS_SILU = "silu" in dir(F)
    HAS_NOTHING = "no_such_function" in dir(F)
    LACKS_SILU = "silu" not in dir(F)


    def checked_sqrt(x: float) -> float:
        _assert(x >= 0, "negative")
        return math.sqrt(x)
""")


def test_a_fallback_for_a_failed_torch_import_is_what_the_port_runs() -> None:
    """`try: from torch import f` / `except ImportError: def f(...)`: without torch the import fails, so the port
    runs the handler (and any `finally`) where the try held only torch imports that went; a handler that does not
    catch a failed import keeps its try."""
    ported = _port(FALLBACK)
    assert ported.startswith("import math\ndef _assert(condition: bool, message: str):\n    assert condition, message\n")
    assert "_fast_gelu = None\nREADY = True\n" in ported
    assert "try:\n    pass\nexcept RuntimeError:\n    _assert_async = None\nHAS_BOARD = False\n" in ported
    assert "HAS_SILU = True\nHAS_NOTHING = False\nLACKS_SILU = False\n" in ported
    assert "torch" not in ported
    namespace: dict[str, object] = {}
    exec(compile(ported, "checked.py", "exec"), namespace)
    checked = namespace["checked_sqrt"]
    assert callable(checked) and checked(4.0) == 2.0 and namespace["_fast_gelu"] is None
    board = namespace["board"]
    assert callable(board) and board("runs") is None  # as torch's code runs where tensorboard is missing
    with pytest.raises(AssertionError, match="negative"):
        checked(-1.0)


QUERIES = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def autocast_on(device: str = "cuda") -> bool:
        return torch.is_autocast_enabled(device)


    ACTIVATIONS = dict(leaky=F.leaky_relu, relu=F.relu)


    def build(width: int, compiled: bool = False):
        layer = nn.Sequential(nn.Linear(width, width), nn.ReLU())
        if compiled:
            layer = torch.jit.script(layer)
        return layer
""")


def test_torch_queries_values_and_compilation_need_no_torch() -> None:
    """A query with arguments that run nothing is its fixed value; a function passed as a value whose MindSpore
    form has other defaults is a partial with torch's; torch.jit.script(m) computes what m computes: m."""
    ported = _port(QUERIES)
    assert "def autocast_on(device: str = \"cuda\") -> bool:\n    return False\n" in ported
    assert "leaky=functools.partial(mindspore.ops.leaky_relu, alpha=0.01)" in ported
    assert "    if compiled:\n        pass\n    return layer\n" in ported  # `layer = layer` is no statement
    assert "torch" not in ported.replace("mindspore", "")


DEAD = textwrap.dedent("""\
    import torch


    def default_device(device=None):
        if device is not None:
            return str(device)
        if hasattr(torch, "no_such_query"):
            found = torch.no_such_query()
            return found.type
        return "cpu"
""")


def test_a_branch_only_a_missing_torch_name_takes_goes() -> None:
    """`if hasattr(torch, "x"):` answered False (no else): the branch never runs, and its torch uses go with it."""
    ported = _port(DEAD)
    assert "        return str(device)\n    pass\n    return \"cpu\"\n" in ported
    assert "torch" not in ported
    namespace: dict[str, object] = {}
    exec(compile(ported, "device.py", "exec"), namespace)
    pick = namespace["default_device"]
    assert callable(pick) and pick() == "cpu" and pick("meta") == "meta"
