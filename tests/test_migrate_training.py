"""`torch2ms migrate` on training loops: the step becomes a forward function, value_and_grad and
optimizer(grads) (clipping, accumulation, schedulers kept), and the port trains as torch does: both
programs run for real and print the same losses."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.cli import main
from torch2ms.mappings import MappingError
from torch2ms.migrate.pipeline import migrate_text, torch_references
from torch2ms.training_rules import parse_rules
from torch2ms.transforms.support import imported_support

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "train"
NUMBER = re.compile(r"-?\d+\.\d+")


def _write_port(path: Path, text: str) -> None:
    """The port and the support modules it imports beside it, as `torch2ms migrate --out` writes them."""
    path.write_text(text, encoding="utf-8")
    for module, source in imported_support(text).items():
        (path.parent / f"{module}.py").write_text(source, encoding="utf-8")


def _run(path: Path, cwd: Path) -> list[float]:
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [float(x) for line in proc.stdout.splitlines() for x in NUMBER.findall(line)]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
@pytest.mark.parametrize("name", ["clip_steplr.py", "accumulate.py", "loader.py", "step_function.py"])
def test_training_loop_ported_trains_like_torch(name: str, tmp_path: Path) -> None:
    source = (DATA / name).read_text(encoding="utf-8")
    migration = migrate_text(source, name)
    out = migration.text
    assert torch_references(out) == [], out
    assert ".backward(" not in out and "zero_grad" not in out and ".step()" not in out.replace("scheduler.step()", "")
    assert "DataLoader(" not in out and "(Dataset)" not in out
    assert "mindspore.value_and_grad(forward_fn, None, optimizer.parameters" in out
    assert not [d for d in migration.result.diagnostics if d.code in ("TMS361", "TMS362", "TMS363")]
    assert any("as value_and_grad + optimizer(grads)" in note for note in migration.notes)
    ported = tmp_path / "port" / name
    ported.parent.mkdir()
    _write_port(ported, out)
    expected = _run(DATA / name, tmp_path)
    got = _run(ported, ported.parent)
    assert len(expected) == len(got) >= 4
    for a, b in zip(expected, got):
        assert abs(a - b) <= 2e-5 * max(1.0, abs(a)), (expected, got)


def test_aux_outputs_clipping_and_accumulation_forms() -> None:
    out = migrate_text((DATA / "clip_steplr.py").read_text(encoding="utf-8"), "c.py").text
    # the prediction is read after the step (the log line): it comes back next to the loss
    assert "(loss, prediction), grads = grad_fn(x, y)" in out
    assert "has_aux=True" in out
    assert "grads = mindspore.ops.clip_by_global_norm(grads, 0.5)" in out
    assert "optimizer(grads)" in out and "scheduler.step()" in out
    acc = migrate_text((DATA / "accumulate.py").read_text(encoding="utf-8"), "a.py").text
    assert "accumulated_grads = None\nfor i in range(12):" in acc
    assert "optimizer(accumulated_grads)\n        accumulated_grads = None" in acc
    assert "total += loss.item()" in acc  # what the loop did around the step stays
    step = migrate_text((DATA / "step_function.py").read_text(encoding="utf-8"), "s.py").text
    # a function whose body is the step: the forward function and grad_fn are built inside it
    assert "def train_step(x, y):\n    def forward_fn(x, y):" in step
    assert "grads = tuple(mindspore.ops.clamp(g, -(0.5), 0.5) for g in grads)" in step


LEFT = """
import torch
import torch.nn as nn

model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(3, 2)
for _ in range(2):
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    optimizer.step()
for _ in range(2):
    loss = model(x).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=1)
    optimizer.step()
"""


def test_loops_outside_the_rule_stay_with_the_finding_and_a_reason() -> None:
    migration = migrate_text(textwrap.dedent(LEFT), "left.py")
    assert migration.text.count(".backward(") == 2
    reasons = [n for n in migration.notes if "training loop left as it is" in n]
    assert len(reasons) == 2, migration.notes
    assert "backward() is called with arguments" in reasons[0]
    assert "norm_type=1" in reasons[1]
    assert [d.code for d in migration.result.diagnostics].count("TMS361") == 2
    assert migration.left == reasons


def test_migrate_prints_why_a_loop_was_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "left.py"
    source.write_text(textwrap.dedent(LEFT), encoding="utf-8")
    assert main(["migrate", str(source), "--out", str(tmp_path / "out"), "--isolated"]) == 1
    out = capsys.readouterr().out
    assert "left.py:8: training loop left as it is: backward() is called with arguments" in out


def test_training_table_is_validated() -> None:
    with pytest.raises(MappingError, match="training.yaml"):
        parse_rules("backward: [torch.Tensor.backward]\n")


def test_training_rules_are_validated_once_then_read_compiled(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The first load validates the installed rules and writes their compiled copy; a later start reads the copy
    (no schema validation) and gets the same rules; a copy that is not the rules (damaged) is built again."""
    from torch2ms import training_rules

    monkeypatch.setenv("TORCH2MS_CACHE_DIR", str(tmp_path))
    first = training_rules.load_rules.__wrapped__()
    copies = list((tmp_path / "torch2ms").glob("training-*.pickle"))
    assert len(copies) == 1
    parsed: list[str] = []

    def counted(text: str, file_name: str = training_rules.TRAINING_FILE) -> training_rules.TrainingRules:
        parsed.append(file_name)
        return parse_rules(text, file_name)

    monkeypatch.setattr(training_rules, "parse_rules", counted)
    assert training_rules.load_rules.__wrapped__() == first and parsed == []
    copies[0].write_bytes(b"not a pickle")
    assert training_rules.load_rules.__wrapped__() == first and parsed == [training_rules.TRAINING_FILE]
    assert first.role("torch.Tensor.backward") == "backward"


@pytest.mark.needs_mindspore
def test_data_loaders_and_saved_state_become_mindspore(tmp_path: Path) -> None:
    migration = migrate_text((DATA / "loader.py").read_text(encoding="utf-8"), "loader.py")
    out = migration.text
    assert "class Pairs:" in out
    assert ('mindspore.dataset.GeneratorDataset(Pairs(18), column_names=["column_0", "column_1"], '
            'shuffle=False).batch(4, drop_remainder=True)') in out
    assert ("mindspore.dataset.GeneratorDataset(list(zip(mindspore.mint.ones((6, 3)).asnumpy(), "
            "mindspore.mint.zeros((6, 1)).asnumpy())), column_names=[\"column_0\", \"column_1\"], "
            "shuffle=False).batch(3, drop_remainder=False)") in out
    assert 'mindspore.save_checkpoint(model, "linear.pt")' in out
    # MindSpore's save writes linear.pt.ckpt and its load reads only .ckpt names
    assert "mindspore.load_param_into_net(copy, mindspore.load_checkpoint('linear.pt.ckpt'))" in out
    ported = tmp_path / "loader.py"
    _write_port(ported, out)
    _run(ported, tmp_path)
    assert (tmp_path / "linear.pt.ckpt").is_file()
    left = migrate_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        data = TensorDataset(torch.ones(4, 2))
        loader = DataLoader(data, batch_size=2, collate_fn=list)
        """), "left.py")
    assert "DataLoader(data, batch_size=2, collate_fn=list)" in left.text
    assert left.left == ["5: torch.utils.data.DataLoader left as it is: the collate function is not one function "
                         "defined in the file"]


def test_zero_grad_outside_a_training_loop_goes_away() -> None:
    migration = migrate_text(textwrap.dedent("""
        import torch
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        if model.training:
            model.zero_grad(set_to_none=True)
        """), "z.py")
    assert "zero_grad" not in migration.text
    assert "if model.training:\n    pass\n" in migration.text
    assert not migration.result.diagnostics


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_scheduler_rates_read_as_floats_like_torch(tmp_path: Path) -> None:
    # MindSpore's get_last_lr() gives Tensors, which a number format rejects: the port reads floats
    source = textwrap.dedent("""\
        import torch
        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.Adam([w], lr=0.01)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        for _ in range(3):
            sched.step()
            rates = sched.get_last_lr()
            print(f"lr={rates[0]:.6f} first={sched.get_last_lr()[0]:.6f} sum={sum(sched.get_last_lr()):.6f}")
        """)
    original = tmp_path / "rates.py"
    original.write_text(source, encoding="utf-8")
    out = migrate_text(source, "rates.py").text
    assert "torch" not in out
    ported = tmp_path / "port" / "rates.py"
    ported.parent.mkdir()
    _write_port(ported, out)
    expected = _run(original, tmp_path)
    assert len(expected) == 9
    assert _run(ported, ported.parent) == expected


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_collated_batches_buffers_label_casts_and_a_dict_of_states_train_like_torch(tmp_path: Path) -> None:
    """A collate function that returns three columns from samples a dataset stores as tuples, a buffer kept
    out of SGD groups chosen by name (its weight decay would change it), a cross-entropy the model holds,
    called with the labels by keyword, and one checkpoint of model, optimizer and epoch."""
    name = "padded_sequences.py"
    migration = migrate_text((DATA / name).read_text(encoding="utf-8"), name)
    out = migration.text
    assert torch_references(out) == [], out
    assert migration.left == []
    assert ('column_names=["column_0", "column_1"], shuffle=False).batch(4, drop_remainder=False, '
            'per_batch_map=lambda *columns: pad(list(zip(*columns[:-1]))), '
            'output_columns=["column_0", "column_1", "column_2"])') in out
    assert ("self.criterion(self(features, lengths), labels=(labels.astype(mindspore.int32) if labels.dtype == "
            "mindspore.int64 else labels))") in out
    assert "for n, p in ((n, p) for n, p in model.parameters_and_names() if p.requires_grad) if" in out
    assert ('mindspore.save_checkpoint({f"{key}.{name}": value for key, state in {"model": model.parameters_dict(), '
            '"optimizer": optimizer.state_dict()}.items() for name, value in state.items()}, "sequences.pt", '
            'append_dict={"epoch": epoch})') in out
    ported = tmp_path / "port" / name
    ported.parent.mkdir()
    _write_port(ported, out)
    expected = _run(DATA / name, tmp_path)
    got = _run(ported, ported.parent)
    assert len(expected) == len(got) == 11  # the losses of ten steps, then the buffer's sum
    assert expected[-1] == got[-1] == 2.0  # the buffer is not decayed
    for a, b in zip(expected, got):
        assert abs(a - b) <= 2e-5 * max(1.0, abs(a)), (expected, got)
    keys = subprocess.run([sys.executable, "-c", "import mindspore; print(sorted(mindspore.load_checkpoint("
                           "'sequences.pt.ckpt')))"], capture_output=True, text=True, timeout=300,
                          cwd=ported.parent, check=True).stdout
    for key in ("'model.hidden.weight'", "'model.scale'", "'optimizer.accum.hidden.weight'", "'epoch'"):
        assert key in keys, keys


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_one_state_of_a_saved_dict_of_states_is_read_back(tmp_path: Path) -> None:
    """torch.save({"net": m.state_dict(), "opt": ..., "round": 2}, path) and then
    other.load_state_dict(torch.load(path)["net"]): the port writes one checkpoint and reads the "net" state's
    tensors back into a freshly built Cell, which then computes what the saved one does."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(3, 4)
                self.out = nn.Linear(4, 2)

            def forward(self, x):
                return self.out(torch.tanh(self.proj(x)))


        source = Head()
        sgd = torch.optim.SGD(source.parameters(), lr=0.1, momentum=0.9)
        checkpoint = "head_states"
        torch.save({"net": source.state_dict(), "opt": sgd.state_dict(), "round": 2}, checkpoint)
        target = Head()
        before = float((source(torch.ones(2, 3)) - target(torch.ones(2, 3))).abs().max())
        target.load_state_dict(torch.load(checkpoint)["net"])
        x = torch.ones(2, 3)
        print(before > 0, float((source(x) - target(x)).abs().max()))
        """)
    migration = migrate_text(source, "states.py")
    out = migration.text
    assert torch_references(out) == [], out
    assert not migration.result.diagnostics, migration.result.diagnostics
    assert ("mindspore.load_param_into_net(target, {name[len('net.'):]: value for name, value in "
            "mindspore.load_checkpoint(") in out
    original = tmp_path / "states.py"
    original.write_text(source, encoding="utf-8")
    ported = tmp_path / "port" / "states.py"
    ported.parent.mkdir()
    _write_port(ported, out)
    for folder, path in ((tmp_path, original), (ported.parent, ported)):
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=folder,
                              env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.split() == ["True", "0.0"], proc.stdout
    assert (ported.parent / "head_states.ckpt").is_file()
    # a key that is not a string literal: left for its finding
    left = migrate_text(source.replace('torch.load(checkpoint)["net"]', "torch.load(checkpoint)[0]"), "states.py")
    assert "torch.load(checkpoint)[0]" in left.text


def test_label_casts_follow_the_instances_the_file_builds() -> None:
    out = migrate_text(textwrap.dedent("""
        import torch
        import torch.nn as nn
        ce = nn.CrossEntropyLoss(reduction="sum")
        mse = nn.MSELoss()
        other = nn.CrossEntropyLoss()
        other = nn.MSELoss()
        logits, labels = torch.randn(5, 4), torch.randint(0, 4, (5,))
        a = ce(logits, labels[1:] if True else labels)
        b = ce(input=logits, target=labels)
        c = nn.CrossEntropyLoss()(logits, labels)
        d = mse(logits, logits)
        e = other(logits, logits)
        loss_fn = nn.CrossEntropyLoss()
        f = loss_fn(logits, labels)

        def score(loss_fn, a, b):
            return loss_fn(a, b)
        """), "casts.py").text
    assert ("a = ce(logits, ((labels[1:] if True else labels).astype(mindspore.int32) if (labels[1:] if True else "
            "labels).dtype == mindspore.int64 else (labels[1:] if True else labels)))") in out
    assert "b = ce(logits=logits, labels=(labels.astype(mindspore.int32) if labels.dtype == mindspore.int64 else labels))" in out
    assert ("c = mindspore.nn.CrossEntropyLoss()(logits, (labels.astype(mindspore.int32) if labels.dtype == "
            "mindspore.int64 else labels))") in out
    # an MSE loss, and a name that also holds another class (or names a parameter), keep their arguments
    assert "d = mse(logits, logits)" in out and "e = other(logits, logits)" in out
    # a name that is also a parameter's: migrate's pass leaves it, the fix engine (which knows the scopes) casts the
    # module's instance and leaves the parameter
    assert "f = loss_fn(logits, (labels.astype(mindspore.int32) if labels.dtype == mindspore.int64 else labels))" \
        in out and "return loss_fn(a, b)" in out


def test_a_dict_of_states_without_a_literal_key_stays_with_a_reason() -> None:
    migration = migrate_text(textwrap.dedent("""
        import torch
        model = torch.nn.Linear(2, 1)
        key = "net"
        torch.save({key: model.state_dict()}, "a.pt")
        torch.save({"step": 3}, "b.pt")
        """), "states.py")
    # not a MindSpore checkpoint: the support module's save, which pickles the dict (tensors as their values)
    assert 't2ms_support.save({key: model.parameters_dict()}, "a.pt")' in migration.text
    assert 't2ms_support.save({"step": 3}, "b.pt")' in migration.text
    assert "torch" not in migration.text.replace("t2ms_support", "")
    assert migration.left == ["5: a dict of states left as it is: a key that is not a string literal or an "
                              "unpacked dict"]


def test_a_collate_function_that_returns_no_tuple_stays_with_a_reason() -> None:
    migration = migrate_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Rows(Dataset):
            def __init__(self):
                self.rows = []
                for i in range(4):
                    self.rows.append((i, i + 1))

            def __len__(self):
                return len(self.rows)

            def __getitem__(self, index):
                return self.rows[index]

        def stack(samples):
            return torch.tensor(samples)

        loader = DataLoader(Rows(), batch_size=2, collate_fn=stack)
        """), "rows.py")
    assert "DataLoader(Rows(), batch_size=2, collate_fn=stack)" in migration.text
    assert migration.left == ["20: torch.utils.data.DataLoader left as it is: stack does not return tuples of "
                              "one length"]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_labels_a_call_computes_are_cast_once_and_the_loss_is_torchs() -> None:
    code = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        crit = nn.CrossEntropyLoss()
        calls = []


        def shuffled(labels):
            calls.append(1)
            return labels.flip(0)


        logits = torch.tensor([[0.1, 0.9, 0.2], [0.7, 0.1, 0.3], [0.2, 0.2, 0.6]])
        labels = torch.tensor([1, 0, 2])
        loss = float(crit(logits, shuffled(labels))) + float(crit(logits, labels))
    """)
    out = migrate_text(code, "prog.py").text
    assert torch_references(out) == []
    # the computed labels go through the cast's lambda (one evaluation); a name keeps the plain form
    assert out.count("lambda __arg") == 1 and "(labels.astype(mindspore.int32) if labels.dtype" in out
    expected: dict[str, object] = {}
    exec(compile(code, "prog.py", "exec"), expected)  # noqa: S102 - the test's own program
    import mindspore

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    got: dict[str, object] = {}
    exec(compile(out, "prog.py", "exec"), got)  # noqa: S102 - the test's own port
    assert got["calls"] == [1]
    assert abs(float(got["loss"]) - float(expected["loss"])) < 1e-5  # type: ignore[arg-type]
