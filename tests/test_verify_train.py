"""`torch2ms verify-train`: the original trains in torch (twice, for the drift) and the port in MindSpore
from the same initial weights; a correct port agrees, a wrong optimizer argument or a missing scheduler
step is named with its first step."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.cli import main
from torch2ms.migrate.pipeline import migrate_text

DATA = Path(__file__).resolve().parent / "data" / "train"
ORIGINAL = DATA / "clip_steplr.py"


def _port(tmp_path: Path, old: str = "", new: str = "") -> Path:
    text = migrate_text(ORIGINAL.read_text(encoding="utf-8"), ORIGINAL.name).text
    assert old in text
    path = tmp_path / "ported.py"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_migrated_program_trains_the_same(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify-train", str(ORIGINAL), "--steps", "5", "--mode", mode]) == 0
    out = capsys.readouterr().out
    assert "agree: 5 steps" in out
    assert "torch against itself (1 and 2 threads)" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_missing_scheduler_step_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ported = _port(tmp_path, "    scheduler.step()\n", "")
    assert main(["verify-train", str(ORIGINAL), str(ported), "--steps", "5"]) == 1
    out = capsys.readouterr().out
    # StepLR(step_size=3): the rate halves for the fourth step, which the port misses
    assert "diverged at step 3: learning rate of group 0: torch 0.1, MindSpore 0.2 " in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("old, new", [("momentum=0.9", "momentum=0.5"),
                                      ("clip_by_global_norm(grads, 0.5)", "clip_by_global_norm(grads, 5.0)")])
def test_a_wrong_optimizer_argument_or_clip_is_named(old: str, new: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    ported = _port(tmp_path, old, new)
    assert main(["verify-train", str(ORIGINAL), str(ported), "--steps", "5"]) == 1
    out = capsys.readouterr().out
    assert "diverged at step 0: weight:" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_port_that_does_not_run_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ported = _port(tmp_path, "optimizer(grads)", "optimizer(grads, grads)")
    assert main(["verify-train", str(ORIGINAL), str(ported), "--steps", "2"]) == 2
    assert "the mindspore program did not train: TypeError" in capsys.readouterr().out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_port_that_imports_the_support_module_trains_the_same(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Adam with L2 weight decay and an embedding with a padding row: the port (migrated in memory) imports the
    support module migrate writes beside it, and verify-train runs it so."""
    original = tmp_path / "tags.py"
    original.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn

        torch.manual_seed(0)


        class Tags(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(9, 4, padding_idx=8)
                self.out = nn.Linear(4, 3)

            def forward(self, ids):
                return self.out(self.emb(ids).mean(1))


        model = Tags()
        opt = torch.optim.Adam(model.parameters(), lr=0.03, eps=1e-6, weight_decay=0.02)
        ids = torch.tensor([[0, 1, 8, 8], [2, 3, 4, 8], [5, 6, 7, 1]])
        labels = torch.tensor([0, 2, 1])
        for _ in range(5):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(ids), labels)
            loss.backward()
            opt.step()
        """), encoding="utf-8")
    assert "import t2ms_support\n" in migrate_text(original.read_text(encoding="utf-8"), "tags.py").text
    assert main(["verify-train", str(original), "--steps", "5"]) == 0
    assert "agree: 5 steps" in capsys.readouterr().out
