"""Data pipeline: torch.utils.data, torchvision, torch ops in data processing (TMS351, TMS352)."""
import numpy as np
import torch
import torchvision.transforms as T  # expect: TMS351
from torch.utils.data import DataLoader, Dataset, RandomSampler


class Images(Dataset):  # expect: TMS351
    def __init__(self, n):
        self.n = n
        self.transform = T.Compose([T.ToTensor()])

    def __len__(self):
        return self.n

    def __getitem__(self, index):  # expect: TMS352
        image = torch.rand(3, 8, 8)
        return image.flip(0), index


class NumpyImages(Dataset):  # expect: TMS351
    def __len__(self):
        return 4

    def __getitem__(self, index):  # expect: none
        return np.zeros((3, 8, 8), np.float32), index


def stack_batch(batch):  # expect: TMS352
    images, labels = zip(*batch)
    return torch.stack(images), torch.tensor(labels)


def numpy_collate(batch):  # expect: none
    return np.stack([b[0] for b in batch])


def make_loader():
    data = Images(8)
    sampler = RandomSampler(data)  # expect: TMS351
    return DataLoader(data, batch_size=2, sampler=sampler, collate_fn=stack_batch)  # expect: TMS351
