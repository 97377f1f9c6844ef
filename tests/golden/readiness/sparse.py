"""Sparse tensors and sparse gradients (TMS311)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Recommender(nn.Module):  # expect: TMS331
    def __init__(self):
        super().__init__()
        self.items = nn.Embedding(1000, 16, sparse=True)  # expect: TMS311
        self.users = nn.Embedding(1000, 16)  # expect: none
        self.tags = nn.EmbeddingBag(50, 8, sparse=False)  # expect: none

    def forward(self, users, items, adjacency):
        x = self.items(items) * self.users(users)
        return torch.sparse.mm(adjacency, x)  # expect: TMS311


def build(indices, values):
    coo = torch.sparse_coo_tensor(indices, values, (3, 3))  # expect: TMS311
    csr = coo.to_sparse_csr()  # expect: TMS311
    dense = torch.zeros(3, 3)  # expect: none
    half = dense.to_sparse()  # expect: TMS311
    weights = torch.ones(3)
    looked_up = F.embedding(indices, weights, sparse=True)  # expect: TMS311
    return csr, half, looked_up, torch.sparse.sum(coo)  # expect: TMS311
