# Usage programs: loss functions and loss modules (see creation.py for the format).

# %% cross_entropy_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(300)
logits = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
target = torch.tensor([1, 0, 4, 2])


def run():
    return F.cross_entropy(logits, target)

# %% cross_entropy_sum
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(301)
logits = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
target = torch.tensor([1, 0, 4, 2])


def run():
    return F.cross_entropy(logits, target, reduction="sum")

# %% cross_entropy_ignore_index
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(302)
logits = torch.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
target = torch.tensor([1, -100, 2, 0, -100])


def run():
    return F.cross_entropy(logits, target, ignore_index=-100)

# %% cross_entropy_label_smoothing
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(303)
logits = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
target = torch.tensor([0, 2, 1, 1])


def run():
    return F.cross_entropy(logits, target, label_smoothing=0.1)

# %% cross_entropy_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(304)
logits = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
target = torch.tensor([3, 3, 0, 1])
criterion = nn.CrossEntropyLoss()


def run():
    return criterion(logits, target)

# %% cross_entropy_module_weight
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(305)
logits = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
target = torch.tensor([0, 1, 2, 1])
criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))


def run():
    return criterion(logits, target)

# %% cross_entropy_module_none
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(306)
logits = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
target = torch.tensor([0, 1, 2, 1])
criterion = nn.CrossEntropyLoss(reduction="none")


def run():
    return criterion(logits, target)

# %% mse_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(307)
pred = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.mse_loss(pred, target)

# %% mse_module_sum
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(308)
pred = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
loss_fn = nn.MSELoss(reduction="sum")


def run():
    return loss_fn(pred, target)

# %% mse_module_default
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(309)
pred = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return nn.MSELoss()(pred, target)

# %% l1_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(310)
pred = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.l1_loss(pred, target)

# %% l1_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(311)
pred = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
criterion = nn.L1Loss()


def run():
    return criterion(pred, target)

# %% nll_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(312)
logits = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
target = torch.tensor([2, 0, 1, 1])


def run():
    return F.nll_loss(F.log_softmax(logits, dim=1), target)

# %% nll_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(313)
logp = torch.from_numpy(np.log(rng.dirichlet(np.ones(3), size=4)).astype(np.float32))
target = torch.tensor([2, 0, 1, 1])
criterion = nn.NLLLoss()


def run():
    return criterion(logp, target)

# %% bce_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(314)
prob = torch.from_numpy(rng.uniform(0.05, 0.95, (4,)).astype(np.float32))
target = torch.tensor([1.0, 0.0, 1.0, 0.0])


def run():
    return F.binary_cross_entropy(prob, target)

# %% bce_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(315)
prob = torch.from_numpy(rng.uniform(0.05, 0.95, (2, 3)).astype(np.float32))
target = torch.from_numpy(rng.integers(0, 2, (2, 3)).astype(np.float32))
criterion = nn.BCELoss()


def run():
    return criterion(prob, target)

# %% bce_logits_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(316)
logits = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))
target = torch.from_numpy(rng.integers(0, 2, (4, 2)).astype(np.float32))


def run():
    return F.binary_cross_entropy_with_logits(logits, target)

# %% bce_logits_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(317)
logits = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
target = torch.tensor([1.0, 1.0, 0.0, 0.0])
criterion = nn.BCEWithLogitsLoss()


def run():
    return criterion(logits, target)

# %% bce_logits_pos_weight
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(318)
logits = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))
target = torch.from_numpy(rng.integers(0, 2, (3, 2)).astype(np.float32))
criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 0.5]))


def run():
    return criterion(logits, target)

# %% smooth_l1_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(319)
pred = torch.from_numpy((rng.standard_normal((6,)) * 2).astype(np.float32))
target = torch.zeros(6)


def run():
    return F.smooth_l1_loss(pred, target)

# %% smooth_l1_module_beta
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(320)
pred = torch.from_numpy((rng.standard_normal((6,)) * 2).astype(np.float32))
target = torch.zeros(6)
criterion = nn.SmoothL1Loss(beta=0.5)


def run():
    return criterion(pred, target)

# %% huber_module
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(321)
pred = torch.from_numpy((rng.standard_normal((6,)) * 2).astype(np.float32))
target = torch.zeros(6)
criterion = nn.HuberLoss(delta=1.0)


def run():
    return criterion(pred, target)

# %% kl_div_batchmean
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(322)
student = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
teacher = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.kl_div(F.log_softmax(student, dim=1), F.softmax(teacher, dim=1), reduction="batchmean")

# %% kl_div_module
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(323)
student = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
teacher = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
criterion = nn.KLDivLoss(reduction="sum")


def run():
    return criterion(F.log_softmax(student, dim=1), F.softmax(teacher, dim=1))

# %% cosine_embedding_loss
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(324)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
y = torch.tensor([1.0, -1.0, 1.0])
criterion = nn.CosineEmbeddingLoss(margin=0.1)


def run():
    return criterion(a, b, y)

# %% margin_ranking_loss
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(325)
a = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
y = torch.tensor([1.0, -1.0, 1.0, -1.0])
criterion = nn.MarginRankingLoss(margin=0.5)


def run():
    return criterion(a, b, y)

# %% mse_legacy_size_average
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(326)
pred = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
target = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
criterion = nn.MSELoss(size_average=False)


def run():
    return criterion(pred, target)

# %% soft_margin_loss
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(327)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
y = torch.tensor([1.0, -1.0, -1.0, 1.0])


def run():
    return nn.SoftMarginLoss()(x, y)

# %% triplet_margin_loss
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(328)
anchor = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
pos = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
neg = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
criterion = nn.TripletMarginLoss(margin=1.0)


def run():
    return criterion(anchor, pos, neg)

# %% gaussian_nll_manual
import numpy as np
import torch

rng = np.random.default_rng(329)
mu = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
logvar = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return (0.5 * (logvar + (y - mu) ** 2 / torch.exp(logvar))).mean()
