"""The program `benchmarks/recall.py` traces: real models of transformers and diffusers, built from small
configs with random weights (no downloads), one training step and one evaluation each.

Run it under the tracer: ``torch2ms trace -o trace.json -- python benchmarks/recall_models.py LINES.json``.
LINES.json receives the lines of the libraries' files that ran while the models were built, trained and
evaluated (for the precision check: a finding is checked only on a line that ran).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import diffusers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

LIBRARIES = [os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep for m in (transformers, diffusers)]
_executed: dict[str, set[int]] = {}


def _local(frame: Any, event: str, arg: Any) -> Any:
    if event == "line":
        _executed[frame.f_code.co_filename].add(frame.f_lineno)
    return _local


def _global(frame: Any, event: str, arg: Any) -> Any:
    name = frame.f_code.co_filename
    if name in _executed:
        _executed[name].add(frame.f_lineno)
        return _local
    if name.startswith(tuple(LIBRARIES)):
        _executed[name] = {frame.f_lineno}
        return _local
    return None


def text_batch(vocab: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, vocab, (2, 16))
    return {"input_ids": ids, "labels": ids}


def image_batch() -> dict[str, torch.Tensor]:
    return {"pixel_values": torch.randn(2, 3, 32, 32), "labels": torch.tensor([0, 2])}


def hf_models() -> list[tuple[str, Callable[[], Any], Callable[[], dict[str, torch.Tensor]]]]:
    t = transformers
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 37}
    return [
        ("bert", lambda: t.BertForMaskedLM(t.BertConfig(vocab_size=99, max_position_embeddings=64, **small)),
         lambda: text_batch(99)),
        ("gpt2", lambda: t.GPT2LMHeadModel(t.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                                        bos_token_id=0, eos_token_id=0)),
         lambda: text_batch(99)),
        ("llama", lambda: t.LlamaForCausalLM(t.LlamaConfig(vocab_size=99, num_key_value_heads=2,
                                                           max_position_embeddings=64, **small)),
         lambda: text_batch(99)),
        ("t5", lambda: t.T5ForConditionalGeneration(t.T5Config(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2,
                                                               num_heads=4, decoder_start_token_id=0)),
         lambda: text_batch(99)),
        ("vit", lambda: t.ViTForImageClassification(t.ViTConfig(image_size=32, patch_size=8, num_labels=3, **small)),
         image_batch),
        ("convnext", lambda: t.ConvNextForImageClassification(t.ConvNextConfig(hidden_sizes=[8, 16, 32, 64],
                                                                               depths=[1, 1, 1, 1], num_labels=3)),
         image_batch),
        ("swin", lambda: t.SwinForImageClassification(t.SwinConfig(image_size=32, patch_size=2, embed_dim=16,
                                                                   depths=[1, 1], num_heads=[2, 2], window_size=4,
                                                                   num_labels=3)),
         image_batch),
    ]


def train_and_eval(name: str, model: Any, loss_of: Callable[[Any], torch.Tensor]) -> None:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    loss = loss_of(model)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    model.eval()
    with torch.no_grad():
        loss_of(model)
    print(f"{name}: trained one step and evaluated", flush=True)


def main() -> None:
    lines_out = sys.argv[1] if len(sys.argv) > 1 else None
    torch.manual_seed(0)
    sys.settrace(_global)
    for name, build, batch in hf_models():
        data = batch()
        train_and_eval(name, build(), lambda model, data=data: model(**data).loss)
    unet = diffusers.UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                                 block_out_channels=(32, 64), down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                                 up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8)
    sample = torch.randn(1, 3, 16, 16)
    train_and_eval("unet", unet, lambda model: model(sample, 3).sample.pow(2).mean())
    vae = diffusers.AutoencoderKL(in_channels=3, out_channels=3, block_out_channels=(32, 64),
                                  down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                                  latent_channels=4, norm_num_groups=8, sample_size=16)
    train_and_eval("vae", vae, lambda model: model(sample).sample.pow(2).mean())
    sys.settrace(None)
    if lines_out:
        with open(lines_out, "w", encoding="utf-8") as handle:
            json.dump({path: sorted(lines) for path, lines in _executed.items()}, handle)


if __name__ == "__main__":
    main()
