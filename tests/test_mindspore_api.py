"""src/torch2ms/data/mindspore_api.json: regenerated from the installed MindSpore it equals the shipped file, and
the lookups over it answer as MindSpore itself does."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from conftest import ROOT, load_script
from torch2ms.portcheck.api import Signature, load_api


@pytest.fixture(scope="module")
def script() -> Any:
    return load_script(ROOT / "scripts" / "build_mindspore_api.py", "build_mindspore_api_under_test")


@pytest.mark.needs_mindspore
def test_the_shipped_data_is_what_the_installed_mindspore_gives() -> None:
    # in a fresh interpreter: what MindSpore's modules hold depends on what was imported and run before
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_mindspore_api.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "matches the installed MindSpore" in done.stdout


def test_a_signature_round_trips_through_its_text(script: Any) -> None:
    def sample(a, b, /, c, d=1, *args, e, f=2, **kw):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        return None

    def sample2(a=None, b="same", c=object(), d=2.5, e="a,b"):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202, B008
        return None

    text = script.signature_text(sample)
    assert text == "a, b, /, c, d=1, *args, e, f=2, **kw"
    params = Signature.parse(text).params
    assert [(p.name, p.kind, p.required) for p in params] == [
        ("a", "pos", True), ("b", "pos", True), ("c", "any", True), ("d", "any", False), ("args", "*", False),
        ("e", "kw", True), ("f", "kw", False), ("kw", "**", False)]
    assert [p.default for p in params if not p.required and p.kind in ("any", "kw")] == [1, 2]
    text = script.signature_text(sample2)
    assert text == "a=None, b='same', c=, d=2.5, e="  # only plain constants are written
    assert [repr(p.default) for p in Signature.parse(text).params] == ["None", "'same'", "...", "2.5", "..."]


@pytest.mark.needs_mindspore
def test_lookups_answer_as_mindspore_does() -> None:
    import mindspore

    api = load_api()
    assert api.version == mindspore.__version__
    pool = api.name("mindspore.ops.max_pool2d")
    assert pool is not None and pool.kind == "fn" and pool.signature is not None
    assert [p.name for p in pool.signature.params] == list(inspect.signature(mindspore.ops.max_pool2d).parameters)
    conv = api.name("mindspore.nn.Conv2d")
    assert conv is not None and conv.kind == "cls" and conv.cell
    assert api.name("mindspore.ops.no_such_function") is None
    for member in ("cuda", "is_cuda", "polygamma"):
        assert api.tensor_member(member) is None
        assert not hasattr(mindspore.ops.ones(2), member)
    assert api.tensor_member("aminmax") is not None and hasattr(mindspore.Tensor, "aminmax")
    assert api.tensor_member("shape") is not None and api.tensor_member("shape").attribute  # type: ignore[union-attr]
    assert api.tensor_member("requires_grad") is None and api.tensor_member("requires_grad", parameter=True)


@pytest.mark.needs_mindspore
def test_check_fails_on_data_that_differs(tmp_path: Any) -> None:
    import subprocess
    import sys

    stale = tmp_path / "mindspore_api.json"
    stale.write_text((ROOT / "src" / "torch2ms" / "data" / "mindspore_api.json").read_text(encoding="utf-8")
                     .replace('"max_pool2d":{', '"max_pool2d_old":{', 1), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_mindspore_api.py"), "--check", "--out",
                           str(stale)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "differs from the installed MindSpore" in done.stderr


def test_a_parameter_typed_as_a_dtype_alone_is_read_from_the_docstring(script: Any) -> None:
    def sample(x, axis=0, dtype=None, *, out_dtype=None, kind=None):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        """Sum.

        Args:
            x (Tensor): the input.
            axis (int): an axis (not a dtype).
            dtype (:class:`mindspore.dtype`, optional): the result's type.
            out_dtype (mindspore.dtype): keyword only.
            kind (Union[mindspore.dtype, str]): a dtype or a name: not a dtype alone.

        Returns:
            Tensor.
        """
        return None

    class NoSignature:
        """A class inspect cannot read: the docstring's order gives the positions.

        Args:
            input_data (list): the data.
            dtype (mindspore.dtype): its type.
        """

        __signature__ = property(lambda self: (_ for _ in ()).throw(ValueError("no signature")))

    assert script.dtype_params(sample) == {"dtype": 2, "out_dtype": None}
    assert script.dtype_params(NoSignature) == {"dtype": 1}
    assert script.dtype_params(len) == {}
