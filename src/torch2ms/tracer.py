"""`torch2ms trace -- python SCRIPT.py ARGS`: run a user's script with every torch call recorded.

This is the only part of torch2ms that runs the user's code, and only because the user asked
for it; it imports torch (the scan never imports this module). What it records, per call site
(file, position of the call expression, API):

- torch functions, ``torch.nn.functional`` functions and Tensor methods, seen through a
  `torch.overrides.TorchFunctionMode`;
- constructions of torch classes: layers (``nn.Conv2d(...)``), ``nn.Parameter``, optimizers;
- calls of torch layers (``self.conv(x)``), with the shapes they produced;
- the methods of ``nn.Module`` and ``torch.optim.Optimizer`` that user code calls
  (``self.register_buffer``, ``optimizer.step``).

A call is recorded only where user code makes it: the frame that calls the torch API lies
outside torch, the standard library and torch2ms, and between the two there is nothing but the
API's own entry frame (``F.dropout``'s Python body, the dispatch machinery). So ``F.linear``
inside ``nn.Linear.forward`` is not a call of the user's line ``self.fc(x)``: the layer call is.
The trace is a JSON document (`torch2ms.trace` reads it; ``torch2ms scan --trace FILE``).
"""

from __future__ import annotations

import dis
import functools
import inspect
import json
import os
import runpy
import site
import sys
import sysconfig
import threading
import traceback
import types
from collections.abc import Callable, Sequence
from typing import Any

from .trace import FORMAT, VERSION, program
from .writing import atomic

_MAX_SHAPES = 8  # distinct (input shapes, output shapes) pairs kept per call site
_CALL_OPS = frozenset(dis.opmap[name] for name in ("CALL", "PRECALL", "CALL_FUNCTION_EX", "CALL_FUNCTION",
                                                   "CALL_METHOD", "CALL_FUNCTION_KW") if name in dis.opmap)
_CACHE = dis.opmap.get("CACHE", -1)
_ATTR_OPS = frozenset(dis.opmap[name] for name in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR") if name in dis.opmap)
_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.nn.init")


def _folders() -> tuple[list[str], list[str], list[str]]:
    """(torch's and torch2ms's folders, the standard library's, the site-packages folders), each ending in
    a separator: the files of the first are never user code, nor those of the second outside the third."""
    import torch

    own = [os.path.dirname(os.path.abspath(torch.__file__)), os.path.dirname(os.path.abspath(__file__)),
           os.path.dirname(os.path.realpath(__file__))]
    paths = sysconfig.get_paths()
    stdlib = [os.path.abspath(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)]
    sites = [os.path.abspath(paths[key]) for key in ("purelib", "platlib") if paths.get(key)]
    try:
        sites.extend(os.path.abspath(p) for p in site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    return ([d.rstrip(os.sep) + os.sep for d in own], [d.rstrip(os.sep) + os.sep for d in stdlib],
            [d.rstrip(os.sep) + os.sep for d in sites])


class Recorder:
    """Collects call sites; `document()` gives the trace."""

    def __init__(self, include: Sequence[str] = ()) -> None:
        self.own, self.stdlib, self.site_dirs = _folders()
        self.torch_dir = self.own[0]
        self.include = [os.path.abspath(p).rstrip(os.sep) for p in include]
        self.sites: dict[tuple[str, int, int, int, int, str, str], dict[str, Any]] = {}
        self._user: dict[str, bool] = {}
        self._positions: dict[types.CodeType, list[Any]] = {}
        self._torch_file: dict[str, bool] = {}
        self.names: dict[int, tuple[str, ...]] = {}
        self._keep: list[Any] = []  # the named objects, so that their ids stay theirs
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ names
    def index_names(self) -> None:
        """id(object) -> its public torch names (torch.conv2d is also torch.nn.functional.conv2d)."""
        import importlib

        import torch

        for namespace in _NAMESPACES:
            module = importlib.import_module(namespace)
            for attr in dir(module):
                if attr.startswith("__"):
                    continue
                if attr.startswith("_") and not attr.startswith("_foreach"):
                    continue
                obj = getattr(module, attr, None)
                if callable(obj) and not isinstance(obj, type):
                    self._name(obj, f"{namespace}.{attr}")
        for attr in dir(torch.Tensor):
            if attr.startswith("__") and attr not in ("__getitem__", "__setitem__"):
                continue
            obj = inspect.getattr_static(torch.Tensor, attr, None)
            if isinstance(obj, (staticmethod, classmethod)):
                continue
            if callable(obj):
                self._name(getattr(torch.Tensor, attr), f"torch.Tensor.{attr}")

    def _name(self, obj: Any, name: str) -> None:
        names = self.names.get(id(obj), ())
        if name not in names:
            self.names[id(obj)] = (*names, name)
            self._keep.append(obj)

    def api_of(self, func: Any) -> tuple[tuple[str, ...], str]:
        """(names, kind) of a function the torch-function mode saw."""
        names = self.names.get(id(func))
        if names is not None:
            first = names[0]
            if first.startswith("torch.Tensor."):
                return names, "method"
            if first.startswith("torch.nn.functional."):
                return names, "functional"
            return names, "function"
        owner = getattr(func, "__self__", None)
        if getattr(func, "__name__", "") in ("__get__", "__set__") and owner is not None:
            attr = getattr(owner, "__name__", "")
            return (f"torch.Tensor.{attr}",), "attribute" if func.__name__ == "__get__" else "attribute_set"
        module = getattr(func, "__module__", None) or "?"
        return (f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', '?'))}",), "other"

    # ------------------------------------------------------------------ frames
    def is_user(self, filename: str) -> bool:
        """A file of the user's program (or of a library it uses), not torch, torch2ms or the standard library."""
        known = self._user.get(filename)
        if known is not None:
            return known
        path = os.path.abspath(filename)
        user = not filename.startswith("<") and os.path.isfile(path) \
            and not any(path.startswith(d) for d in self.own) \
            and (any(path.startswith(d) for d in self.site_dirs) or not any(path.startswith(d) for d in self.stdlib))
        if user and self.include:
            user = any(path == root or path.startswith(root + os.sep) for root in self.include)
        self._user[filename] = user
        return user

    def is_torch(self, filename: str) -> bool:
        known = self._torch_file.get(filename)
        if known is None:
            known = os.path.abspath(filename).startswith(self.torch_dir)
            self._torch_file[filename] = known
        return known

    def position(self, frame: types.FrameType) -> tuple[int, int, int, int]:
        """(line, col, end line, end col) of the instruction `frame` is executing (the call expression;
        columns are UTF-8 byte offsets, as in Python's ast)."""
        code = frame.f_code
        table = self._positions.get(code)
        if table is None:
            table = list(code.co_positions())
            self._positions[code] = table
        index = frame.f_lasti // 2
        if 0 <= index < len(table):
            line, end_line, col, end_col = table[index]
            if line is not None:
                return line, col or 0, end_line or line, end_col or 0
        return frame.f_lineno, 0, frame.f_lineno, 0

    @staticmethod
    def syntax(frame: types.FrameType) -> str:
        """What the instruction `frame` executes is in the source: "call", "attribute" or "operator"
        (``a + b``, ``x[i]``, which torch dispatches as ``Tensor.add``, ``Tensor.__getitem__``)."""
        code = frame.f_code.co_code
        index = frame.f_lasti
        while 0 < index < len(code) and code[index] == _CACHE:  # a call into Python code stops on its cache
            index -= 2
        op = code[index] if 0 <= index < len(code) else -1
        if op in _CALL_OPS:
            return "call"
        return "attribute" if op in _ATTR_OPS else "operator"

    def user_site(self, frame: types.FrameType | None, entry_names: Sequence[str]) -> types.FrameType | None:
        """The user frame that called the API directly, walking out from `frame` (inside the API);
        None when torch code, not user code, made the call."""
        entry: types.FrameType | None = None
        while frame is not None and self.is_torch(frame.f_code.co_filename):
            entry = frame
            frame = frame.f_back
        if frame is None or not self.is_user(frame.f_code.co_filename):
            return None
        if entry is not None and entry.f_code.co_name not in entry_names:
            return None  # the API ran inside another torch function (F.linear inside nn.Linear.forward)
        return frame

    # ------------------------------------------------------------------ records
    def record(self, frame: types.FrameType, names: Sequence[str], kind: str, inputs: Any = None,
               output: Any = None) -> None:
        line, col, end_line, end_col = self.position(frame)
        key = (os.path.abspath(frame.f_code.co_filename), line, col, end_line, end_col, names[0], kind)
        shapes = (_shapes(inputs), _shapes(output)) if output is not None or inputs is not None else None
        with self.lock:
            site_ = self.sites.get(key)
            if site_ is None:
                site_ = {"count": 0, "shapes": [], "names": list(names)}
                self.sites[key] = site_
            site_["count"] += 1
            if shapes is not None and shapes not in site_["shapes"] and len(site_["shapes"]) < _MAX_SHAPES:
                site_["shapes"].append(shapes)

    def document(self, argv: Sequence[str], status: int) -> dict[str, Any]:
        import torch

        calls = []
        for (path, line, col, end_line, end_col, api, kind), info in sorted(self.sites.items()):
            item: dict[str, Any] = {"file": path, "line": line, "col": col, "end_line": end_line,
                                    "end_col": end_col, "api": api, "kind": kind, "count": info["count"]}
            if len(info["names"]) > 1:
                item["aliases"] = info["names"][1:]
            if info["shapes"]:
                item["shapes"] = [{"in": list(i), "out": list(o)} for i, o in info["shapes"]]
            calls.append(item)
        return {"format": FORMAT, "version": VERSION, "torch": torch.__version__, "argv": list(argv),
                "exit_status": status, "calls": calls}


def _shapes(value: Any) -> tuple[tuple[int, ...], ...]:
    """The shapes of the tensors in `value` (a tensor, or a flat tuple/list/dict of them)."""
    import torch

    if isinstance(value, torch.Tensor):
        return (tuple(int(d) for d in value.shape),)
    items: Any = ()
    if isinstance(value, (tuple, list)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    out = []
    for item in items:
        if isinstance(item, torch.Tensor):
            out.append(tuple(int(d) for d in item.shape))
    return tuple(out)


def _member_names(owner: str, cls: type, name: str) -> tuple[str, ...]:
    """`owner.name`, and the torch class's own spelling (torch.optim.SGD.step) beside it."""
    if cls.__module__.startswith("torch."):
        own = f"{_public_class_name(cls)}.{name}"
        if own != f"{owner}.{name}":
            return f"{owner}.{name}", own
    return (f"{owner}.{name}",)


def _inputs(args: Sequence[Any], kwargs: dict[str, Any] | None) -> tuple[Any, ...]:
    return tuple(args) + tuple((kwargs or {}).values())


def _public_class_name(cls: type) -> str:
    import torch

    module = cls.__module__
    for namespace, mod in (("torch.nn", torch.nn), ("torch.optim", torch.optim),
                           ("torch.optim.lr_scheduler", torch.optim.lr_scheduler)):
        if module.startswith(namespace + ".") or module == namespace:
            if getattr(mod, cls.__name__, None) is cls:
                return f"{namespace}.{cls.__name__}"
    return f"{module}.{cls.__qualname__}"


class _Hooks:
    """The patches of torch's classes that record constructions and method calls; undone by `remove`."""

    # nn.Module methods that are API calls of the user when user code calls them
    MODULE_METHODS = (
        "add_module", "apply", "bfloat16", "buffers", "children", "cpu", "cuda", "double", "eval", "extra_repr",
        "float", "get_buffer", "get_parameter", "get_submodule", "half", "load_state_dict", "modules",
        "named_buffers", "named_children", "named_modules", "named_parameters", "parameters",
        "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
        "register_full_backward_hook", "register_module", "register_parameter", "requires_grad_",
        "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "type", "zero_grad",
    )
    OPTIMIZER_METHODS = ("step", "zero_grad", "add_param_group", "state_dict", "load_state_dict")

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.undo: list[tuple[Any, str, Any]] = []

    def patch(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = owner.__dict__.get(name)
        if original is None:
            return
        self.undo.append((owner, name, original))
        setattr(owner, name, make(original))

    def install(self) -> None:
        import torch

        recorder = self.recorder

        def construction(original: Any) -> Any:
            @functools.wraps(original)
            def __init__(self_: Any, *args: Any, **kwargs: Any) -> Any:
                cls = type(self_)
                if cls.__module__.startswith("torch."):
                    frame: types.FrameType | None = sys._getframe(1)
                    while frame is not None and frame.f_locals.get("self") is self_:
                        frame = frame.f_back  # the __init__ chain of the constructed object
                    if frame is not None and recorder.is_user(frame.f_code.co_filename):
                        kind = "layer" if isinstance(self_, torch.nn.Module) else "class"
                        recorder.record(frame, (_public_class_name(cls),), kind)
                return original(self_, *args, **kwargs)
            return __init__

        self.patch(torch.nn.Module, "__init__", construction)
        self.patch(torch.optim.Optimizer, "__init__", construction)
        self.patch(torch.optim.lr_scheduler.LRScheduler, "__init__", construction)

        def tensor_new(original: Any) -> Any:
            def __new__(cls: Any, *args: Any, **kwargs: Any) -> Any:
                frame = sys._getframe(1)
                if cls.__module__.startswith("torch.") and frame is not None \
                        and recorder.is_user(frame.f_code.co_filename):
                    recorder.record(frame, (_public_class_name(cls),), "class")
                return original(cls, *args, **kwargs)
            return staticmethod(__new__)

        for tensor_class in (torch.nn.Parameter, getattr(torch.nn, "Buffer", None)):
            if tensor_class is not None:
                self.patch(tensor_class, "__new__", tensor_new)

        def layer_call(original: Any) -> Any:
            @functools.wraps(original)
            def __call__(self_: Any, *args: Any, **kwargs: Any) -> Any:
                cls = type(self_)
                if not cls.__module__.startswith("torch."):
                    return original(self_, *args, **kwargs)
                frame = sys._getframe(1)
                result = original(self_, *args, **kwargs)
                if frame is not None and recorder.is_user(frame.f_code.co_filename):
                    recorder.record(frame, (_public_class_name(cls),), "layer_call", _inputs(args, kwargs), result)
                return result
            return __call__

        self.patch(torch.nn.Module, "__call__", layer_call)

        def method(owner: str, name: str) -> Callable[[Any], Any]:
            def make(original: Any) -> Any:
                @functools.wraps(original)
                def wrapper(self_: Any, *args: Any, **kwargs: Any) -> Any:
                    frame = sys._getframe(1)
                    if frame is not None and recorder.is_user(frame.f_code.co_filename):
                        recorder.record(frame, _member_names(owner, type(self_), name), "object_method")
                    return original(self_, *args, **kwargs)
                return wrapper
            return make

        for name in self.MODULE_METHODS:
            self.patch(torch.nn.Module, name, method("torch.nn.Module", name))
        for name in self.OPTIMIZER_METHODS:
            if name != "step":  # subclasses define step: the global hook below sees it
                self.patch(torch.optim.Optimizer, name, method("torch.optim.Optimizer", name))

        def step_hook(optimizer: Any, args: Any, kwargs: Any) -> None:
            frame: types.FrameType | None = sys._getframe(1)
            while frame is not None and recorder.is_torch(frame.f_code.co_filename):
                frame = frame.f_back
            if frame is not None and recorder.is_user(frame.f_code.co_filename):
                recorder.record(frame, _member_names("torch.optim.Optimizer", type(optimizer), "step"),
                                "object_method")

        from torch.optim.optimizer import register_optimizer_step_pre_hook

        handle = register_optimizer_step_pre_hook(step_hook)
        self.undo.append((handle, "", None))

    def remove(self) -> None:
        for owner, name, original in reversed(self.undo):
            if name:
                setattr(owner, name, original)
            else:
                owner.remove()  # a hook's handle
        self.undo.clear()


def _mode(recorder: Recorder) -> Any:
    from torch.overrides import TorchFunctionMode

    class _Recording(TorchFunctionMode):  # type: ignore[misc]
        def __torch_function__(self, func: Any, types_: Any, args: Sequence[Any] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            result = func(*args, **(kwargs or {}))
            names, kind = recorder.api_of(func)
            if kind != "other":
                entries = (getattr(func, "__name__", ""), names[0].rpartition(".")[2],
                           getattr(getattr(func, "__code__", None), "co_name", ""))
                frame = recorder.user_site(sys._getframe(1), entries)
                if frame is not None and kind == "method" and recorder.syntax(frame) == "operator":
                    kind = "operator"
                if frame is not None:
                    recorder.record(frame, names, kind, _inputs(args, kwargs) if kind != "attribute" else None,
                                    result if kind != "attribute" else None)
            return result

    return _Recording()


def run(command: Sequence[str], output: str, include: Sequence[str] = ()) -> int:
    """Run `command` (``python SCRIPT.py ARGS``, ``SCRIPT.py ARGS`` or ``python -m MODULE ARGS``) in this
    interpreter with torch calls recorded; write the trace to `output` (also when the script fails).
    Returns the script's exit status."""
    try:
        module, argv = program(command)
    except ValueError as exc:
        raise TraceUsageError(str(exc)) from None
    recorder = Recorder(include)
    recorder.index_names()
    hooks = _Hooks(recorder)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    if module is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    else:
        sys.path.insert(0, os.getcwd())
    status = 0
    hooks.install()
    try:
        with _mode(recorder):
            if module is None:
                runpy.run_path(argv[0], run_name="__main__")
            else:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
        if not isinstance(code, int) and code is not None:
            print(code, file=sys.stderr)  # as Python prints sys.exit("message")
        status = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:  # the script's own error: its traceback as Python shows it, then the trace
        status = 130 if isinstance(exc, KeyboardInterrupt) else 1
        _print_script_error(exc)
    finally:
        hooks.remove()
        sys.argv, sys.path[:] = saved_argv, saved_path
        write(recorder.document(list(command), status), output)
    return status


def _print_script_error(exc: BaseException) -> None:
    """The traceback of an exception the traced script raised, without the frames of torch2ms and runpy."""
    own = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in own
                              or os.path.abspath(tb.tb_frame.f_code.co_filename) in own):
        tb = tb.tb_next
    sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))
    sys.stderr.flush()


def write(document: dict[str, Any], output: str) -> None:
    with atomic(output) as handle:
        json.dump(document, handle, indent=None, separators=(",", ":"))
        handle.write("\n")


class TraceUsageError(Exception):
    """A trace command that cannot run (no script, an unsupported option)."""
