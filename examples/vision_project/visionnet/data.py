"""Synthetic image data: coloured squares whose class is the square's colour."""

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class SquaresDataset(Dataset):
    def __init__(self, size=256, image_size=32, num_classes=4, seed=0):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, num_classes, size=size)
        self.offsets = rng.integers(0, image_size // 2, size=(size, 2))
        self.image_size = image_size
        self.num_classes = num_classes

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = torch.zeros(3, self.image_size, self.image_size)
        top, left = (int(v) for v in self.offsets[index])
        label = int(self.labels[index])
        image[label % 3, top:top + 8, left:left + 8] = 1.0
        return image, label


def make_loaders(batch_size=32):
    train = DataLoader(SquaresDataset(seed=0), batch_size=batch_size, shuffle=True)
    test = DataLoader(SquaresDataset(size=64, seed=1), batch_size=batch_size)
    return train, test
