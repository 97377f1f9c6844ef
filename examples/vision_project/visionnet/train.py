"""Train and evaluate SquaresNet on synthetic data."""

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim.lr_scheduler import StepLR

from .data import make_loaders
from .model import SquaresNet, activation_histogram, confident_logits


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits, _ = model(images)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


@torch.no_grad()
def evaluate(model, loader, device, k):
    model.eval()
    correct = seen = 0
    for images, labels in loader:
        logits, _ = model(images.to(device))
        preds = logits.argmax(dim=1)
        correct += preds.eq(labels.to(device)).sum().item()
        seen += labels.size(0)
        # k comes from the caller: the output shape can change between calls.
        top_values, _ = torch.topk(logits, k)
        confident = confident_logits(logits, threshold=0.9)
    return correct / max(seen, 1), top_values, confident


def main(epochs=2):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SquaresNet().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    train_loader, test_loader = make_loaders()
    for epoch in range(epochs):
        loss = train_one_epoch(model, train_loader, optimizer, device)
        scheduler.step()
        accuracy, _, _ = evaluate(model, test_loader, device, k=epoch + 1)
        print(f"epoch {epoch}: loss {loss:.3f}, accuracy {accuracy:.2%}")
    sample = torch.randn(4, 3, 32, 32)
    print("histogram:", activation_histogram(torch.tanh(sample)).tolist())
    print("active channels:", model.active_channels(sample).tolist())
    print("criterion check:", criterion(model(sample)[0], torch.zeros(4, dtype=torch.long)).item())
    torch.save(model.state_dict(), "squaresnet.pt")


if __name__ == "__main__":
    main()
