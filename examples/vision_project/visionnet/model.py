"""The network: two conv blocks, global pooling and a linear classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 32


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SquaresNet(nn.Module):
    def __init__(self, num_classes=4, top_k=2):
        super().__init__()
        self.blocks = nn.Sequential(ConvBlock(3, 16), nn.MaxPool2d(2), ConvBlock(16, HIDDEN))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.1)
        self.fc = nn.Linear(HIDDEN, num_classes)
        self.top_k = top_k

    def forward(self, x):
        x = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)
        x = self.blocks(x)
        x = self.pool(x).flatten(1)
        logits = self.fc(self.dropout(x))
        # A constant k: no dynamic shape.
        scores, _ = torch.topk(logits, self.top_k, dim=1)
        return logits, scores

    def active_channels(self, x):
        """Indices of channels whose mean activation is positive: a data-dependent shape."""
        feats = self.blocks(x).mean(dim=(0, 2, 3))
        return torch.nonzero(feats > 0).squeeze(1)


def confident_logits(logits, threshold):
    """Logits of the samples the model is sure about: masked_select makes a dynamic shape."""
    probs = F.softmax(logits, dim=-1)
    mask = probs.max(dim=-1, keepdim=True).values > threshold
    return torch.masked_select(logits, mask)


def activation_histogram(x, bins=10):
    return torch.histc(x, bins=bins, min=-1.0, max=1.0)
