"""A small digit classifier: a custom Dataset of synthetic 12x12 images, a DataLoader, Adadelta and a
StepLR stepped once per epoch, a train and a test function (written for torch2ms's training checks)."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SyntheticDigits(Dataset):
    """Images whose mean brightness in one of four quadrants tells the label."""

    def __init__(self, count, seed):
        rng = np.random.RandomState(seed)
        self.labels = rng.randint(0, 4, size=count).astype(np.int64)
        self.images = rng.rand(count, 1, 12, 12).astype(np.float32) * 0.5
        for i, label in enumerate(self.labels):
            row, col = divmod(int(label), 2)
            self.images[i, 0, row * 6:(row + 1) * 6, col * 6:(col + 1) * 6] += 0.5

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], self.labels[index]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"epoch {epoch} batch {batch_idx} loss {loss.item():.6f}")


def test(model, device, test_loader):
    model.eval()
    test_loss = 0.0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += (pred.view(-1) == target).sum().item()
    print(f"test loss {test_loss / 32:.4f}, accuracy {correct}/32")


def main():
    parser = argparse.ArgumentParser(description="synthetic digits")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--log-interval", type=int, default=4)
    parser.add_argument("--save-model", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(1)
    device = torch.device("cpu")
    train_loader = DataLoader(SyntheticDigits(64, 0), batch_size=8, shuffle=True)
    test_loader = DataLoader(SyntheticDigits(32, 1), batch_size=16)
    model = Net().to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
    if args.save_model:
        torch.save(model.state_dict(), "digits_cnn.pt")


if __name__ == "__main__":
    main()
