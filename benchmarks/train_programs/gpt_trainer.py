"""A tiny GPT on a synthetic character stream: causal self-attention blocks, AdamW with two parameter
groups (no weight decay for biases and norms, chosen by name), linear warm-up through LambdaLR stepped
every step, and clipping by norm (written for torch2ms's training checks)."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = nn.LayerNorm(n_embd)
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.fc_out = nn.Linear(4 * n_embd, n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def attend(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.n_head))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attend(self.ln_1(x))
        return x + self.fc_out(F.gelu(self.fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd=32, n_head=4, n_layer=2):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.shape
        pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def configure_optimizer(model, weight_decay, learning_rate, betas):
    no_decay = ("bias", "ln_")
    decay_params = [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]
    other_params = [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)]
    groups = [
        {"params": decay_params, "weight_decay": weight_decay},
        {"params": other_params, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, eps=1e-8)


def main():
    torch.manual_seed(1337)
    vocab_size, block_size, batch_size = 24, 16, 4
    rng = np.random.RandomState(1337)
    text = rng.randint(0, vocab_size, size=4000)
    model = GPT(vocab_size, block_size)
    optimizer = configure_optimizer(model, weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))
    warmup = 5
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    model.train()
    for it in range(30):
        starts = rng.randint(0, len(text) - block_size - 1, size=batch_size)
        x = torch.tensor(np.stack([text[s:s + block_size] for s in starts]), dtype=torch.long)
        y = torch.tensor(np.stack([text[s + 1:s + 1 + block_size] for s in starts]), dtype=torch.long)
        logits, loss = model(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if it % 5 == 0:
            print(f"iter {it}: loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")


if __name__ == "__main__":
    main()
