"""`MappingTable.view(version, device)`: the tables as one scan sees them, the target choice made once and
passed to every part of the scan instead of a (table, version, device) triple."""

from __future__ import annotations

from torch2ms.mappings import load_table
from torch2ms.model import Device


def test_a_table_view_chooses_each_target_once_for_its_version_and_device() -> None:
    table = load_table()
    entry = table.lookup("torch.nn.functional.softmax")
    assert entry is not None
    for device in ("cpu", "gpu", "ascend", None):
        view = table.view((2, 10), device)
        choice = view.choose(entry)
        assert choice == entry.choose((2, 10), device) and view.choose(entry) is choice  # chosen once
        assert view.target(entry) is choice.target and view.category(entry) is entry.category_for((2, 10), device)
        assert view.device == device and (device is None or type(view.device) is Device)


def test_no_silent_device_default_in_the_scan_pipeline() -> None:
    """Every function of the scan that picks a MindSpore form takes the device (or a TableView) explicitly:
    a forgotten argument is a type error, not the CPU."""
    import inspect

    from torch2ms import checks, dynamic_shape, effort, readiness
    from torch2ms.lsp import convert
    from torch2ms.migrate.transform import CallSites
    from torch2ms.model import MappingEntry
    from torch2ms.transforms import Fixer

    functions = [checks.check_call, dynamic_shape.scope_facts, dynamic_shape.extra_call_diagnostics,
                 readiness.readiness_diagnostics, effort.entry_effort, effort.finding_effort, effort.effort_of,
                 MappingEntry.choose, MappingEntry.target_for, MappingEntry.category_for, convert.hover_markdown,
                 Fixer.__init__, CallSites.__init__]
    for function in functions:
        parameters = inspect.signature(function).parameters
        assert "device" in parameters or "view" in parameters, function
        for name in ("device", "view"):
            if name in parameters:
                assert parameters[name].default is inspect.Parameter.empty, f"{function.__qualname__}: {name}"
