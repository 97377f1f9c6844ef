"""The parameter-name map of a ported file: read statically from both sources and the tables' weight facts,
then applied to the names of real state_dicts (torch builds them here; nothing of the scanned files is run
by the map itself)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.mappings import load_table
from torch2ms.weights import write_map
from torch2ms.weights.facts import Facts
from torch2ms.weights.mapping import MapError, WeightMap, build_map, parse_call, read_map
from torch2ms.weights.place import check, place
from torch2ms.weights.structure import Choice, Container, Instance, Layer, Structure

MODELS = Path(__file__).resolve().parent / "data" / "models"
FACTS = Facts.from_entries(load_table().entries.values())


def _source(name: str) -> str:
    return (MODELS / name).read_text(encoding="utf-8")


def _torch_model(module: str, factory: str, **kwargs):
    sys.path.insert(0, str(MODELS))
    try:
        mod = __import__(module)
        return getattr(mod, factory)(**kwargs)
    finally:
        sys.path.remove(str(MODELS))


def test_structure_follows_helpers_loops_and_class_arguments() -> None:
    net = Structure(_source("convnet_torch.py"), "torch").build("small_resnet")
    assert isinstance(net, Instance) and net.cls == "SmallResNet"
    children = dict(net.children)
    assert [k for k, _ in children["stem"].items] == ["0", "1", "2"]  # type: ignore[union-attr]
    layer2 = children["layer2"]
    assert isinstance(layer2, Container) and layer2.kind == "torch.nn.Sequential"
    first, rest = dict(layer2.items)["0"], layer2.tail  # [block(...)] then block(...) appended in a loop
    assert isinstance(first, Instance) and isinstance(rest, Instance) and first.cls == rest.cls == "BasicBlock"
    downsample = dict(first.children)["downsample"]
    assert isinstance(downsample, Choice) and "stride != 1" in downsample.reason  # None or a Sequential
    assert dict(first.children)["bn1"] == Layer("torch.nn.BatchNorm2d")  # `norm_layer` is None -> BatchNorm2d
    assert children["heads"] == Container("torch.nn.ModuleList", (), Layer("torch.nn.Linear"))
    assert children["extra"] == Container("torch.nn.ModuleList", (), Layer("torch.nn.Conv1d"))  # .append in a loop
    ported = dict(Structure(_source("convnet_ms.py"), "mindspore").build("small_resnet").children)  # type: ignore[union-attr]
    assert ported["extra"] == Container("mindspore.nn.CellList", (), Layer("mindspore.nn.Conv1d"))


@pytest.mark.needs_torch
def test_the_map_of_nested_sequential_and_modulelist_places_every_real_key() -> None:
    weight_map = build_map(_source("convnet_torch.py"), _source("convnet_ms.py"), FACTS,
                           factories=["small_resnet(num_classes=10)"])
    node = weight_map.roots["small_resnet(num_classes=10)"]
    state = _torch_model("convnet_torch", "small_resnet", num_classes=10).state_dict()
    result = place(node, state.keys())
    assert not result.unplaced
    names = {k: p.ms for k, p in result.placed.items()}
    assert names["layer1.0.bn1.running_var"] == "layer1.0.bn1.moving_variance"
    assert names["layer2.1.bn2.weight"] == "layer2.1.bn2.gamma"
    assert names["layer2.0.downsample.1.running_mean"] == "layer2.0.downsample.1.moving_mean"
    assert names["stem.1.num_batches_tracked"] is None
    assert "counts no batches" in result.placed["stem.1.num_batches_tracked"].note
    assert names["heads.1.bias"] == "heads.1.bias" and names["extra.1.weight"] == "extra.1.weight"
    assert result.placed["extra.0.weight"].transform == (("unsqueeze", 2),)  # nn.Conv1d keeps a 2-D kernel
    patterns = {e.torch for e in node.entries}
    assert {"layer1.{i}.conv1.weight", "heads.{i}.weight", "layer2.0.downsample.1.bias"} <= patterns
    # the same map for the class built with its own defaults
    assert not place(weight_map.roots["SmallResNet"], state.keys()).unplaced


@pytest.mark.needs_torch
def test_ties_buffers_and_ordered_dicts_of_the_transformer() -> None:
    weight_map = build_map(_source("transformer_torch.py"), _source("transformer_ms.py"), FACTS)
    state = _torch_model("transformer_torch", "TinyLM").state_dict()
    result = place(weight_map.roots["TinyLM"], state.keys())
    assert not result.unplaced
    head = result.placed["head.weight"]
    assert (head.kind, head.ms, head.tied_to) == ("tie", "embed.embedding_table", "embed.weight")
    assert result.placed["pos"].kind == "buffer"
    assert result.placed["blocks.1.mlp.proj.weight"].ms == "blocks.1.mlp.proj.weight"
    assert result.placed["blocks.0.attn.out_proj.bias"].ms == "blocks.0.attn.out_proj.bias"
    assert result.placed["blocks.0.ln2.bias"].ms == "blocks.0.ln2.beta"
    ms_shapes = {"embed.embedding_table": (40, 16)}
    problems = check(result, {k: tuple(v.shape) for k, v in state.items()}, ms_shapes, {"pos": (12, 16)})
    assert any("blocks.0.ln1.weight -> blocks.0.ln1.gamma: the MindSpore network has no parameter" in p
               for p in problems)
    assert not [p for p in problems if p.startswith(("embed.", "head.", "pos"))]


def test_a_class_given_as_an_argument_is_chosen_by_its_tensors_and_the_map_says_so() -> None:
    torch_src = textwrap.dedent("""
        import torch.nn as nn

        class Small(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

        class Wide(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.norm = nn.LayerNorm(dim)

        class Net(nn.Module):
            def __init__(self, block, depth):
                super().__init__()
                self.blocks = nn.ModuleList([block(8) for _ in range(depth)])
                self.mystery = make_layer()
    """)
    ported_src = torch_src.replace("import torch.nn as nn", "from mindspore import nn").replace(
        "nn.Module", "nn.Cell").replace("nn.ModuleList", "nn.CellList").replace("nn.Linear", "nn.Dense")
    node = build_map(torch_src, ported_src, FACTS).roots["Net"]
    rule = next(r for r in node.rules if r.torch == "blocks.{i}")
    assert rule.rule == "one of" and {o.label for o in rule.options} == {"Small", "Wide"}
    assert "block" in rule.reason
    result = place(node, ["blocks.0.fc.weight", "blocks.0.norm.weight", "blocks.1.fc.bias",
                          "mystery.weight", "other.weight"])
    assert result.placed["blocks.0.norm.weight"].ms == "blocks.0.norm.gamma"
    assert result.placed["blocks.1.fc.bias"].ms == "blocks.1.fc.bias"  # Small and Wide agree on it
    assert any(d.startswith("blocks.0: Wide") for d in result.decisions)
    assert "unknown at mystery" in result.unplaced["mystery.weight"]
    assert result.unplaced["other.weight"].startswith("the map has no entry")


def test_what_the_map_cannot_name_stays_unplaced_with_the_reason() -> None:
    torch_src = textwrap.dedent("""
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.EmbeddingBag(10, 4)
                self.conv = nn.Conv2d(3, 4, 3)
                self.gone = nn.Linear(4, 4)
    """)
    ported_src = textwrap.dedent("""
        from mindspore import nn

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.emb = nn.Dense(10, 4)
                self.conv = nn.Dense(3, 4)
    """)
    node = build_map(torch_src, ported_src, FACTS).roots["Net"]
    result = place(node, ["emb.weight", "conv.weight", "gone.weight"])
    assert not result.placed
    assert "no weight facts for torch.nn.EmbeddingBag -> mindspore.nn.Dense" in result.unplaced["emb.weight"]
    assert "no weight facts for torch.nn.Conv2d -> mindspore.nn.Dense (they have them for" in result.unplaced["conv.weight"]
    assert "the port's Net has no attribute gone" in result.unplaced["gone.weight"]


def test_write_map_is_the_entry_point_for_migrate(tmp_path: Path) -> None:
    out = tmp_path / "convnet.weights.json"
    returned = write_map(str(MODELS / "convnet_torch.py"), str(MODELS / "convnet_ms.py"), str(out),
                         factories=["small_resnet(num_classes=10)"])
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "torch2ms-weight-map" and data["version"] == 1
    assert set(data["roots"]) == {"BasicBlock", "SmallResNet", "small_resnet(num_classes=10)"}
    assert read_map(str(out)) == returned == WeightMap.from_json(data)
    entry = next(e for e in data["roots"]["SmallResNet"]["entries"] if e["torch"] == "stem.1.weight")
    assert entry == {"torch": "stem.1.weight", "ms": "stem.1.gamma", "kind": "parameter",
                     "from": "torch.nn.BatchNorm2d -> mindspore.nn.BatchNorm2d"}
    with pytest.raises(MapError, match="cannot read"):
        write_map(str(tmp_path / "missing.py"), str(MODELS / "convnet_ms.py"), str(out))
    broken = tmp_path / "broken.py"
    broken.write_text("class Net(:\n", encoding="utf-8")
    with pytest.raises(MapError, match="broken.py:1: cannot parse the ported file"):
        write_map(str(MODELS / "convnet_torch.py"), str(broken), str(out))
    (tmp_path / "bad.json").write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(MapError, match="not a torch2ms weight map"):
        read_map(str(tmp_path / "bad.json"))


def test_factory_calls_take_literals_only() -> None:
    assert parse_call("resnet18(num_classes=10, widths=(1, 2))") == ("resnet18", (), {"num_classes": 10,
                                                                                      "widths": (1, 2)})
    assert parse_call("Net") == ("Net", (), {})
    for bad in ("resnet18(num_classes=n)", "a.b()", "f(**kw)", "f(", "__import__('os').system('x')"):
        with pytest.raises(ValueError):
            parse_call(bad)


def test_code_the_reader_cannot_follow_gives_a_rule_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self, name, args=(), kwargs=()):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(Structure, "build", broken)
    weight_map = build_map(_source("rnn_torch.py"), _source("rnn_ms.py"), FACTS)
    result = place(weight_map.roots["TextRNN"], ["fc.weight"])
    assert result.unplaced["fc.weight"] == ("unknown: the map builder could not follow TextRNN "
                                            "(RecursionError: maximum recursion depth exceeded)")


def test_a_class_whose_base_cannot_be_resolved_is_still_followed() -> None:
    source = textwrap.dedent("""
        from torch import nn
        from .layers import ProjectBase

        class Block(ProjectBase):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
    """)
    net = Structure(source, "torch").build("Net")
    assert isinstance(net, Instance) and dict(net.children)["block"] == Instance(
        "Block", (("fc", Layer("torch.nn.Linear")),))


def _package(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")


TORCH_PACKAGE = {
    "blocks.py": """
        import torch.nn as nn

        def norm(dim):
            return nn.LayerNorm(dim)

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.norm = norm(dim)

            def forward(self, x):
                return self.norm(self.fc(x))
    """,
    "net.py": """
        import torch.nn as nn
        from .blocks import Block
        from . import blocks

        class Net(nn.Module):
            def __init__(self, dim=4, depth=2):
                super().__init__()
                self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
                self.last = blocks.Block(dim)

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return self.last(x)
    """,
}
PORTED_PACKAGE = {
    "blocks.py": """
        from mindspore import nn

        def norm(dim):
            return nn.LayerNorm((dim,), epsilon=1e-5)

        class Block(nn.Cell):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Dense(dim, dim)
                self.norm = norm(dim)

            def construct(self, x):
                return self.norm(self.fc(x))
    """,
    "net.py": """
        from mindspore import nn
        from .blocks import Block
        from . import blocks

        class Net(nn.Cell):
            def __init__(self, dim=4, depth=2):
                super().__init__()
                self.blocks = nn.CellList([Block(dim) for _ in range(depth)])
                self.last = blocks.Block(dim)

            def construct(self, x):
                for block in self.blocks:
                    x = block(x)
                return self.last(x)
    """,
}


def test_classes_imported_from_the_projects_other_files_are_followed(tmp_path: Path) -> None:
    _package(tmp_path / "orig", TORCH_PACKAGE)
    _package(tmp_path / "port", PORTED_PACKAGE)
    weight_map = write_map(str(tmp_path / "orig" / "net.py"), str(tmp_path / "port" / "net.py"),
                           str(tmp_path / "net.weights.json"))
    result = place(weight_map.roots["Net"], ["blocks.0.fc.weight", "blocks.1.norm.bias", "last.norm.weight"])
    assert not result.unplaced
    assert result.placed["blocks.1.norm.bias"].ms == "blocks.1.norm.beta"
    assert result.placed["last.norm.weight"].ms == "last.norm.gamma"
    # from the texts alone (no files to read), the imported class stays unknown, and says so
    alone = build_map(textwrap.dedent(TORCH_PACKAGE["net.py"]), textwrap.dedent(PORTED_PACKAGE["net.py"]),
                      FACTS).roots["Net"]
    unplaced = place(alone, ["blocks.0.fc.weight", "last.fc.weight"]).unplaced
    assert "the name Block is not known here" in unplaced["blocks.0.fc.weight"]
    assert "the name blocks is not known here" in unplaced["last.fc.weight"]


def test_an_ordered_dict_of_a_list_built_in_branches_gives_one_network_per_branch() -> None:
    """pretrainedmodels' SENet: `layer0 = Sequential(OrderedDict(modules))`, the list chosen by a flag the
    reader cannot decide; each branch is an alternative, chosen by the checkpoint's tensors."""
    torch_src = textwrap.dedent("""
        from collections import OrderedDict
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                if cfg.deep_stem:
                    modules = [('conv1', nn.Conv2d(3, 8, 3)), ('conv2', nn.Conv2d(8, 8, 3))]
                else:
                    modules = [('conv1', nn.Conv2d(3, 8, 7)), ('bn1', nn.BatchNorm2d(8))]
                modules.append(('pool', nn.MaxPool2d(2)))
                self.layer0 = nn.Sequential(OrderedDict(modules))
    """)
    ported_src = torch_src.replace("import torch.nn as nn", "from mindspore import nn").replace(
        "nn.Module", "nn.Cell").replace("nn.Sequential", "nn.SequentialCell")
    node = build_map(torch_src, ported_src, FACTS).roots["Net"]
    shallow = place(node, ["layer0.conv1.weight", "layer0.conv1.bias", "layer0.bn1.weight", "layer0.bn1.bias",
                           "layer0.bn1.running_mean", "layer0.bn1.running_var", "layer0.bn1.num_batches_tracked"])
    assert not shallow.unplaced, shallow.unplaced
    assert shallow.placed["layer0.bn1.running_var"].ms == "layer0.bn1.moving_variance"
    deep = place(node, ["layer0.conv1.weight", "layer0.conv1.bias", "layer0.conv2.weight", "layer0.conv2.bias"])
    assert not deep.unplaced and deep.placed["layer0.conv2.weight"].ms == "layer0.conv2.weight"


def test_a_layer_built_with_a_method_that_returns_it_is_the_layer() -> None:
    """migrate writes `mindspore.nn.BatchNorm2d(8).set_train()` (a torch module starts in training mode, a
    Cell in inference mode): set_train returns the cell, so the map still finds the BatchNorm there."""
    torch_side = textwrap.dedent("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8).train())
    """)
    ported = textwrap.dedent("""
        import mindspore
        class Net(mindspore.nn.Cell):
            def __init__(self):
                super().__init__()
                self.body = mindspore.nn.SequentialCell(mindspore.nn.Conv2d(3, 8, 3),
                                                        mindspore.nn.BatchNorm2d(8).set_train())
    """)
    node = build_map(torch_side, ported, FACTS).roots["Net"]
    result = place(node, ["body.0.weight", "body.0.bias", "body.1.weight", "body.1.bias", "body.1.running_mean",
                          "body.1.running_var", "body.1.num_batches_tracked"])
    assert not result.unplaced
    assert result.placed["body.1.weight"].ms == "body.1.gamma"


def test_layers_built_through_partials_and_classes_chosen_at_run_time_are_placed(tmp_path: Path) -> None:
    """`partial(nn.Conv2d, kernel_size=1)` called later, and a class held by a variable that a condition picks
    (`... if use_conv else nn.Linear`): the map follows the partial to the class it builds on both sides (the port's
    torch-signature layers of the support module stand for the torch classes) and chooses by the tensors."""
    from case_runner import migrate_program

    source = textwrap.dedent("""
        from functools import partial
        import torch.nn as nn

        pointwise = partial(nn.Conv2d, kernel_size=1, bias=False)

        class Head(nn.Module):
            def __init__(self, dim, classes, use_conv=False, norm_layer=partial(nn.BatchNorm2d, eps=1e-3)):
                super().__init__()
                dd = {'device': None, 'dtype': None}
                layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
                self.fc = layer(dim, classes, **dd)
                self.proj = pointwise(dim, dim)
                self.norm = norm_layer(dim)
    """)
    out = migrate_program(tmp_path, source)
    node = read_map(str(out / "prog.weights.json")).roots["Head"]
    keys = ["fc.weight", "fc.bias", "proj.weight", "norm.weight", "norm.bias", "norm.running_mean",
            "norm.running_var"]
    result = place(node, keys)
    assert not result.unplaced, result.unplaced
    assert result.placed["proj.weight"].ms == "proj.weight" and result.placed["fc.bias"].ms == "fc.bias"
    assert result.placed["norm.weight"].ms == "norm.gamma" and result.placed["norm.running_var"].ms == "norm.moving_variance"


def test_alternatives_without_tensors_pair_by_class_and_values_pair_with_nothing(tmp_path: Path) -> None:
    """`nn.Linear(...) if classes > 0 else nn.Identity()`: the Identity has no weight facts (no tensors) and still
    stands for MindSpore's Identity among the alternatives, so the Linear's tensors are placed; an alternative
    that is no layer at all (a plain value) pairs with nothing."""
    from case_runner import migrate_program

    source = textwrap.dedent("""
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, dim, classes, flat=True, scale=None):
                super().__init__()
                self.flatten = nn.Flatten(1) if flat else nn.Identity()
                self.fc = nn.Linear(dim, classes) if classes > 0 else nn.Identity()
                self.norm = nn.LayerNorm(dim) if scale is None else scale
    """)
    out = migrate_program(tmp_path, source, support=False)
    node = read_map(str(out / "prog.weights.json")).roots["Head"]
    result = place(node, ["fc.weight", "fc.bias", "norm.weight", "norm.bias"])
    assert not result.unplaced, result.unplaced
    assert result.placed["fc.weight"].ms == "fc.weight" and result.placed["norm.weight"].ms == "norm.gamma"


STAGES = textwrap.dedent("""
    import torch.nn as nn


    class Unit(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1)
            self.norm = nn.BatchNorm2d(c)

        def forward(self, x):
            return self.norm(self.conv(x))


    def build_levels(widths, depth):
        levels = []
        for level_idx, width in enumerate(widths):
            units = []
            for _ in range(depth):
                units.append(Unit(width))
            levels.append((f"level{level_idx + 1}", nn.Sequential(*units)))
        return levels, len(widths)


    class Net(nn.Module):
        def __init__(self, widths=(4, 4), depth=2):
            super().__init__()
            levels, count = build_levels(widths, depth)
            for level in levels:
                self.add_module(*level)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.level2(self.level1(x)).mean((2, 3)))
""")


@pytest.mark.needs_torch
def test_stages_a_helper_returns_as_named_pairs_added_in_a_loop_are_placed(tmp_path: Path) -> None:
    """A helper builds (f"level{i + 1}", nn.Sequential(*units)) pairs in a loop over `enumerate` and returns them;
    the network adds each with `add_module(*pair)`: every tensor of the real network is placed."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, STAGES, support=False)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(STAGES, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    net = namespace["Net"](widths=(4, 4, 4), depth=3)  # type: ignore[operator]
    assert isinstance(net, torch.nn.Module)
    result = place(node, net.state_dict().keys())
    assert not result.unplaced, result.unplaced
    assert result.placed["level3.2.norm.weight"].ms == "level3.2.norm.gamma"
    assert result.placed["level1.0.conv.bias"].ms == "level1.0.conv.bias"


FEATURES = textwrap.dedent("""
    import torch.nn as nn


    class Separable(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.depthwise = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
            self.pointwise = nn.Conv2d(cin, cout, 1, bias=False)

        def forward(self, x):
            return self.pointwise(self.depthwise(x))


    class Features(nn.Module):
        def __init__(self, plan=(8, 'P', 16), cin=3, norm=True):
            super().__init__()
            layers = []
            for v in plan:
                if v == 'P':
                    layers += [nn.MaxPool2d(2)]
                elif norm:
                    layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU()]
                    cin = v
                else:
                    layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU()]
                    cin = v
            self.body = nn.Sequential(*layers)


    class Repeat(nn.Module):
        def __init__(self, cin, cout, reps, lead_act=True):
            super().__init__()
            units = []
            for i in range(reps):
                units.append(nn.ReLU())
                units.append(Separable(cin if i == 0 else cout, cout))
                units.append(nn.BatchNorm2d(cout))
            if not lead_act:
                units = units[1:]
            else:
                units[0] = nn.ReLU()
            units.append(nn.MaxPool2d(3, 2, 1))
            self.units = nn.Sequential(*units)
""")


@pytest.mark.needs_torch
def test_sequentials_of_lists_grown_in_branches_of_a_loop_are_placed_by_their_tensors(tmp_path: Path) -> None:
    """`layers += [...]` under an if/else in a loop, `units[1:]` and `units[0] = ...`, an append after the loop:
    which layer sits at an index is known only at run time, so each index is one of the loop's layers, told apart
    by the tensors under it (a convolution's weight, a batch norm's weight and running statistics)."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, FEATURES, support=False)
    roots = read_map(str(out / "prog.weights.json")).roots
    namespace: dict[str, object] = {}
    exec(compile(FEATURES, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    cases: list[tuple[str, dict[str, object]]] = [
        ("Features", {"plan": (8, "P", 16, 16, "P")}), ("Repeat", {"cin": 4, "cout": 8, "reps": 3}),
        ("Repeat", {"cin": 4, "cout": 8, "reps": 2, "lead_act": False})]
    for cls, options in cases:
        net = namespace[cls](**options)  # type: ignore[operator]
        assert isinstance(net, torch.nn.Module)
        result = place(roots[cls], net.state_dict().keys())
        assert not result.unplaced and len(result.placed) == len(net.state_dict()), (cls, result.unplaced)
        names = {k: p.ms for k, p in result.placed.items()}
        if cls == "Features":
            assert names["body.0.weight"] == "body.0.weight" and names["body.5.weight"] == "body.5.gamma"
        elif options.get("lead_act", True):
            assert names["units.4.depthwise.weight"] == "units.4.depthwise.weight"
            assert names["units.8.running_var"] == "units.8.moving_variance"


def test_a_subclass_named_as_the_layer_it_derives_from_is_followed(tmp_path: Path) -> None:
    """`class LayerNorm(nn.LayerNorm)`: the port derives it from the support module's class of the same name
    (another file); the map follows the base there instead of taking it for the class itself."""
    from case_runner import migrate_program

    source = textwrap.dedent("""
        import torch.nn as nn

        class LayerNorm(nn.LayerNorm):
            def __init__(self, channels, eps=1e-6):
                super().__init__(channels, eps=eps)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = LayerNorm(4)
                self.fc = nn.Linear(4, 2)
    """)
    out = migrate_program(tmp_path, source)
    assert "class LayerNorm(t2ms_support.LayerNorm):" in (out / "prog.py").read_text()
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    result = place(node, ["norm.weight", "norm.bias", "fc.weight", "fc.bias"])
    assert not result.unplaced, result.unplaced
    assert result.placed["norm.weight"].ms == "norm.gamma" and result.placed["fc.bias"].ms == "fc.bias"


ZIPPED = textwrap.dedent("""
    from itertools import repeat
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1)
            self.bn = nn.BatchNorm2d(c)


    def make_stages(block_fns, widths):
        stages = []
        for block_fn, width in zip(block_fns, widths):
            stages.append(block_fn(width))
        return nn.Sequential(*stages)


    class Net(nn.Module):
        def __init__(self, block=Block, widths=(4, 8)):
            super().__init__()
            self.stages = make_stages(list(repeat(block, len(widths))), widths)
""")


@pytest.mark.needs_torch
def test_classes_from_a_sequence_the_code_cannot_follow_are_told_apart_by_their_tensors(tmp_path: Path) -> None:
    """`for block_fn, width in zip(block_fns, widths)` over a list built by a library call: the element is
    called like a class given as an argument, so it is one of the file's cell classes, chosen by its tensors."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, ZIPPED, support=False)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(ZIPPED, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    net = namespace["Net"](widths=(4, 8, 8))  # type: ignore[operator]
    assert isinstance(net, torch.nn.Module)
    result = place(node, net.state_dict().keys())
    assert not result.unplaced, result.unplaced
    assert result.placed["stages.2.bn.running_mean"].ms == "stages.2.bn.moving_mean"


KWARGS = textwrap.dedent("""
    import torch.nn as nn


    class ChannelScale(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 1, bias=False)
            self.bn = nn.BatchNorm2d(c)


    def shortcut_conv(cin, cout, norm=None):
        norm = norm or nn.BatchNorm2d
        return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), norm(cout))


    def shortcut_pool(cin, cout, norm=None):
        norm = norm or nn.BatchNorm2d
        return nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(cin, cout, 1, bias=False), norm(cout))


    class Unit(nn.Module):
        def __init__(self, cin, cout, shortcut=None, norm=nn.BatchNorm2d, act=nn.ReLU):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
            self.norm = norm(cout)
            self.act = act()
            self.shortcut = shortcut


    def make_units(widths, cin, pooled=False, **kwargs):
        units = []
        for width in widths:
            shortcut = None
            if cin != width:
                options = dict(cin=cin, cout=width, norm=kwargs.get("norm"))
                shortcut = shortcut_pool(**options) if pooled else shortcut_conv(**options)
            settings = {**kwargs, "act": nn.ReLU}
            units.append(Unit(cin, width, shortcut, **settings))
            cin = width
        return nn.Sequential(*units)


    class Net(nn.Module):
        def __init__(self, widths=(4, 8), pooled=False, norm=ChannelScale):
            super().__init__()
            self.units = make_units(widths, 4, pooled=pooled, norm=norm)
""")


@pytest.mark.needs_torch
def test_a_norm_layer_passed_in_kwargs_and_shortcuts_built_one_of_two_ways_are_placed(tmp_path: Path) -> None:
    """The norm class reaches the units through `**kwargs` (`dict(...)`, `kwargs.get(...)`, `{**kwargs, ...}`), and
    a unit's shortcut is a Sequential one of two helpers builds (`a(**options) if c else b(**options)`, each with
    `norm = norm or nn.BatchNorm2d`), or None: every tensor is placed, the norm's by its own class (not the
    unit's default BatchNorm2d), whichever helper built the shortcut."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, KWARGS)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(KWARGS, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    for pooled in (False, True):
        net = namespace["Net"](widths=(4, 8, 8), pooled=pooled)  # type: ignore[operator]
        assert isinstance(net, torch.nn.Module)
        result = place(node, net.state_dict().keys())
        assert not result.unplaced and len(result.placed) == len(net.state_dict()), result.unplaced
        assert result.placed["units.1.norm.bn.running_var"].ms == "units.1.norm.bn.moving_variance"
        last = "units.1.shortcut.2.bn.weight" if pooled else "units.1.shortcut.1.bn.weight"
        assert result.placed[last].ms == last.replace("weight", "gamma")


CONFIGURED = {
    "base.py": """
        import torch.nn as nn


        class Plain(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, padding=1)


        class Net(nn.Module):
            def __init__(self, block=Plain, depth=2, width=4):
                super().__init__()
                self.stem = nn.Conv2d(3, width, 3, padding=1)
                self.blocks = nn.Sequential(*[block(width) for _ in range(depth)])
    """,
    "builder.py": """
        def build(cls, **config):
            return cls(**config)
    """,
    "wide.py": """
        import torch.nn as nn

        from .base import Net
        from .builder import build


        class Wide(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.expand = nn.Conv2d(c, 2 * c, 1)
                self.norm = nn.BatchNorm2d(2 * c)
                self.reduce = nn.Conv2d(2 * c, c, 1)


        def wide_net(depth=3):
            return build(Net, block=Wide, depth=depth)
    """,
}


def _migrate_package(tmp_path: Path, files: dict[str, str]) -> Path:
    """`torch2ms migrate` of a package holding `files`; the port's package folder."""
    import os
    import subprocess

    _package(tmp_path / "src" / "pkg", files)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", str(tmp_path / "src"), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(root / "src")), timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return tmp_path / "out" / "pkg"


@pytest.mark.needs_torch
def test_a_network_of_another_file_built_with_this_files_block_is_placed_by_this_files_map(tmp_path: Path) -> None:
    """wide.py passes base.py's Net (as a value) to a builder with its own block class: wide.py's map has a root for
    Net in which a block its callers give may be one of wide.py's classes, so a Net of Wide blocks is placed."""
    import importlib

    import torch

    port = _migrate_package(tmp_path, CONFIGURED)
    roots = read_map(str(port / "wide.weights.json")).roots
    assert "Net" in roots and "Wide" in roots
    sys.path.insert(0, str(tmp_path / "src"))
    try:
        net = importlib.import_module("pkg.wide").wide_net(depth=3)
    finally:
        sys.path.remove(str(tmp_path / "src"))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]
    assert isinstance(net, torch.nn.Module)
    result = place(roots["Net"], net.state_dict().keys())
    assert not result.unplaced and len(result.placed) == len(net.state_dict()), result.unplaced
    assert result.placed["blocks.2.norm.running_mean"].ms == "blocks.2.norm.moving_mean"
    # base.py's own map knows only base.py's blocks: the Wide blocks stay unplaced there, with the reason
    alone = place(read_map(str(port / "base.weights.json")).roots["Net"], net.state_dict().keys())
    assert alone.unplaced["blocks.0.expand.weight"] == "the map has no entry for it (it names tensors under " \
        "blocks.{i}.conv)"


TREE = textwrap.dedent("""
    import torch.nn as nn


    class Leaf(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, 3, padding=1)


    class WideLeaf(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 1)
            self.bn1 = nn.BatchNorm2d(cout)


    def head(c, classes, dropout=None):
        if dropout is None:
            return nn.Identity(), nn.Linear(c, classes)
        return nn.Identity(), nn.Dropout(dropout), nn.Linear(c, classes)


    class Tree(nn.Module):
        def __init__(self, levels, block, cin, cout):
            super().__init__()
            if levels == 1:
                self.left = block(cin, cout)
                self.right = block(cout, cout)
            else:
                self.left = Tree(levels - 1, block, cin, cout)
                self.right = Tree(levels - 1, block, cout, cout)
            self.project = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()


    class Net(nn.Module):
        def __init__(self, levels, block=Leaf, width=4, classes=3):
            super().__init__()
            self.top = Tree(levels, block, 3, width)
            self.pool, self.fc = head(width, classes)
""")


@pytest.mark.needs_torch
def test_a_tree_that_builds_itself_and_a_block_class_its_callers_choose_are_placed(tmp_path: Path) -> None:
    """A class that builds itself (`Tree(levels - 1, ...)`, levels unknown) is followed two levels deep; a class
    default of the network (`block=Leaf`) may be replaced by its callers with another of the file's classes; a
    helper returning tuples of two lengths unpacks into the names of the length the code takes."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, TREE, support=False)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(TREE, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    for levels, block in ((1, "Leaf"), (2, "WideLeaf")):
        net = namespace["Net"](levels, block=namespace[block])  # type: ignore[operator]
        assert isinstance(net, torch.nn.Module)
        result = place(node, net.state_dict().keys())
        assert not result.unplaced and len(result.placed) == len(net.state_dict()), (levels, result.unplaced)
        assert result.placed["fc.weight"].ms == "fc.weight"
    assert result.placed["top.left.right.bn1.running_var"].ms == "top.left.right.bn1.moving_variance"


NAMED = textwrap.dedent("""
    from collections import OrderedDict
    from functools import partial
    import torch.nn as nn


    class NormAct(nn.BatchNorm2d):
        def __init__(self, c, eps=1e-5, act=True):
            super().__init__(c, eps=eps)
            self.act = nn.ReLU() if act else nn.Identity()


    class GroupAct(nn.GroupNorm):
        def __init__(self, c, eps=1e-5, act=True):
            super().__init__(2, c, eps=eps)


    NORMS = dict(batchnorm=NormAct, groupnorm=GroupAct)
    BY_CLASS = dict(batchnorm2d=NormAct)


    def norm_class(norm, act=True):
        if isinstance(norm, partial):
            norm = norm.func
        if isinstance(norm, str):
            return NORMS[norm.replace("_", "").lower()]
        return BY_CLASS.get(norm.__name__.lower(), None)


    class Unit(nn.Module):
        def __init__(self, c, norm):
            super().__init__()
            self.norm = norm(c)
            self.conv = nn.Conv2d(c, c, 3, padding=1)


    class Net(nn.Module):
        def __init__(self, depth=2, norm="Batch_Norm"):
            super().__init__()
            norm = partial(norm_class(norm), eps=1e-3)
            units = OrderedDict()
            units["stem"] = nn.Conv2d(3, 4, 3)
            for i in range(depth):
                units["unit%d" % (i + 1)] = Unit(4, norm)
            self.features = nn.Sequential(units)
""")


@pytest.mark.needs_torch
def test_layers_chosen_by_a_name_and_filled_into_an_ordered_dict_are_placed(tmp_path: Path) -> None:
    """The norm class is looked up in a dict by a name the code computes (`name.replace(...).lower()`, a class's
    `__name__`, a partial's `func`, `isinstance` of known values), and the units go into an OrderedDict by keys
    built with %-formatting: every tensor is placed."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, NAMED, support=True)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(NAMED, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    net = namespace["Net"](depth=3)  # type: ignore[operator]
    assert isinstance(net, torch.nn.Module)
    result = place(node, net.state_dict().keys())
    assert not result.unplaced and len(result.placed) == len(net.state_dict()), result.unplaced
    assert result.placed["features.unit3.norm.running_mean"].ms == "features.unit3.norm.moving_mean"


GROWN = textwrap.dedent("""
    import torch.nn as nn


    class Cell(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.add_module("norm", nn.BatchNorm2d(c)),
            self.add_module("conv", nn.Conv2d(c, c, 3, padding=1))


    class Group(nn.ModuleDict):
        def __init__(self, count, c):
            super().__init__()
            for i in range(count):
                self.add_module("cell%d" % (i + 1), Cell(c))


    class Net(nn.Module):
        def __init__(self, plan=((2, 4), (3, 4)), wide=False):
            super().__init__()
            if wide:
                self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
            else:
                self.features = nn.Sequential(nn.Conv2d(3, 4, 3))
            for i, (count, c) in enumerate(plan):
                self.features.add_module(f"group{i + 1}", Group(count, c))
            stages = nn.ModuleList([])
            for count, c in plan:
                cells = []
                for _ in range(count):
                    cells.append(Cell(c))
                stages.append(nn.Sequential(*cells))
            stages.append(nn.Sequential(nn.Conv2d(4, 4, 1)))
            self.stages = nn.Sequential(*stages)
""")


@pytest.mark.needs_torch
def test_containers_grown_through_a_name_and_through_an_attribute_are_placed(tmp_path: Path) -> None:
    """A ModuleList held by a local name grows in a loop and is spread into a Sequential; a Sequential attribute
    grows with `self.features.add_module(...)`; a ModuleDict subclass adds its items itself under %-formatted
    names; two nested loops both count with `i` (their numbers stay apart in the map's names)."""
    import torch

    from case_runner import migrate_program

    out = migrate_program(tmp_path, GROWN, support=False)
    node = read_map(str(out / "prog.weights.json")).roots["Net"]
    namespace: dict[str, object] = {}
    exec(compile(GROWN, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    for wide in (False, True):
        net = namespace["Net"](plan=((2, 4), (3, 4), (1, 4)), wide=wide)  # type: ignore[operator]
        assert isinstance(net, torch.nn.Module)
        result = place(node, net.state_dict().keys())
        assert not result.unplaced and len(result.placed) == len(net.state_dict()), (wide, result.unplaced)
    assert result.placed["features.group2.cell3.norm.weight"].ms == "features.group2.cell3.norm.gamma"
    assert result.placed["stages.3.0.weight"].ms == "stages.3.0.weight"
    assert result.placed["stages.1.2.conv.bias"].ms == "stages.1.2.conv.bias"


def test_from_a_package_import_takes_what_the_package_defines_before_its_module_of_that_name(
        tmp_path: Path) -> None:
    """`from pkg import make` where pkg/make.py exists and pkg/__init__.py imports the function `make` from it:
    the name is the function (as Python gives it), not the module."""
    _package(tmp_path / "pkg", {
        "make.py": """
            import torch.nn as nn

            def make(c):
                return nn.Conv2d(c, c, 1)
        """,
    })
    (tmp_path / "pkg" / "__init__.py").write_text("from .make import make\n", encoding="utf-8")
    (tmp_path / "net.py").write_text(textwrap.dedent("""
        import torch.nn as nn
        from pkg import make

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = make(4)
    """), encoding="utf-8")
    path = str(tmp_path / "net.py")
    net = Structure(Path(path).read_text(encoding="utf-8"), "torch", path, path).build("Net")
    assert isinstance(net, Instance) and dict(net.children)["conv"] == Layer("torch.nn.Conv2d")


@pytest.mark.needs_torch
def test_layers_added_by_name_to_a_sequential_are_placed_under_their_names(tmp_path: Path) -> None:
    from torch2ms.migrate.pipeline import migrate_text

    source = textwrap.dedent("""\
        import torch.nn as nn


        class Grown(nn.Module):
            def __init__(self, depth=2):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
                self._grow(depth)
                self.features.add_module("pool", nn.AdaptiveAvgPool2d(1))
                self.features.add_module("norm", nn.BatchNorm2d(4))

            def _grow(self, depth):
                for i in range(depth):
                    self.features.add_module(f"block{i}", nn.Conv2d(4, 4, 1))
    """)
    (tmp_path / "grown.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        import grown  # noqa: PLC0415 - the test's own module
        state = grown.Grown().state_dict()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("grown", None)
    ported = migrate_text(source, "grown.py").text
    result = place(build_map(source, ported, FACTS).roots["Grown"], state.keys())
    assert not result.unplaced
    names = {k: p.ms for k, p in result.placed.items()}
    assert names["features.0.weight"] == "features.0.weight"
    assert names["features.block1.bias"] == "features.block1.bias"
    assert names["features.norm.weight"] == "features.norm.gamma"
    assert names["features.norm.running_var"] == "features.norm.moving_variance"
    # a name the reader cannot know: the container is left unplaced with the reason, on both sides
    other = source.replace('f"block{i}"', 'next(iter(names))').replace("def _grow(self, depth):",
                                                                       "def _grow(self, depth, names=()):")
    unknown = build_map(other, migrate_text(other, "grown.py").text, FACTS).roots["Grown"]
    assert [r.reason for r in unknown.rules if r.torch == "features"] == [
        "a layer added to features by a name not known statically"]


def test_a_sequential_of_what_a_builder_object_returns_says_which_call_it_cannot_read() -> None:
    """Blocks made by a builder object whose class the map cannot follow (here: imported from a package it does not
    read): the container stays unplaced, and the reason names the call that made its elements."""
    torch_src = textwrap.dedent("""
        import torch.nn as nn
        from blocks_lib import StageMaker

        class Net(nn.Module):
            def __init__(self, specs):
                super().__init__()
                maker = StageMaker(width=8)
                self.stages = nn.Sequential(*maker(specs, 3))
                self.head = nn.Linear(8, 2)
    """)
    from torch2ms.migrate.pipeline import migrate_text

    ported = migrate_text(torch_src, "net.py").text
    node = build_map(torch_src, ported, FACTS).roots["Net"]
    (rule,) = [r for r in node.rules if r.torch == "stages"]
    assert rule.reason == ("the elements of a Sequential cannot be followed: `maker(specs, 3)` gives no list whose "
                           "layers the map can read")
    result = place(node, ["stages.0.weight", "head.weight"])
    assert set(result.placed) == {"head.weight"}
    assert "`maker(specs, 3)` gives no list" in result.unplaced["stages.0.weight"]
