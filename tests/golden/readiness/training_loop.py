"""Training-loop idioms (TMS361-TMS365)."""
import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR


def fit(model, loader, optimizer, epochs, accumulation):
    torch.manual_seed(0)  # expect: TMS365
    torch.cuda.manual_seed_all(0)  # expect: TMS365
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(epochs):  # expect: none
        for step, (x, y) in enumerate(loader):  # expect: TMS361
            loss = F.cross_entropy(model(x), y) / accumulation
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TMS362
            if (step + 1) % accumulation == 0:
                optimizer.step()  # expect: TMS363
                optimizer.zero_grad()
        scheduler.step()  # expect: TMS364


def train_step(model, batch, opt):  # expect: TMS361
    opt.zero_grad()
    loss = model(batch).mean()
    loss.backward()
    opt.step()
    return loss


def evaluate(model, loader):
    total = 0.0
    for x, y in loader:  # expect: none
        total += model(x).sum().item()
    return total


def not_training(env, agent):
    while not env.done:  # expect: none
        env.step(agent.act())
