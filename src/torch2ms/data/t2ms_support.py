"""MindSpore forms of torch classes that no single MindSpore class gives, written by torch2ms migrate.

`torch2ms migrate` writes this file once at the top of its output tree when a port uses it; a port
imports it as `t2ms_support`. Each class takes the torch class's arguments and computes what torch
computes (checked against torch 2.13 with MindSpore 2.10 on CPU, PyNative and GRAPH mode).
"""

import mindspore
from mindspore import ops
from mindspore.common.initializer import Normal, initializer


class Adam(mindspore.experimental.optim.AdamW):
    """torch.optim.Adam. mindspore.experimental.optim.Adam adds eps to the second moment's root before
    its bias correction (torch after it) and ignores amsgrad; this is mindspore.experimental.optim.AdamW's
    update, which adds eps as torch does, with torch's L2 weight decay (weight_decay * param added to the
    gradient) unless decoupled_weight_decay is true (then AdamW's). foreach, capturable, differentiable
    and fused choose how torch computes the same update: they are accepted and change nothing."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize)
        self.decoupled_weight_decay = decoupled_weight_decay

    def construct(self, gradients):
        self.assignadd(self.state_step, self.increase_tensor)
        for group_id, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            start_id = self.group_start_id[group_id]
            end_id = self.group_start_id[group_id + 1]
            grads = tuple(grad if not group.get("maximize") else ops.neg(grad)
                          for grad in gradients[start_id:end_id])
            weight_decay = group.get("weight_decay")
            if not self.decoupled_weight_decay:
                grads = self._decay_weight(weight_decay, self.parameters[start_id:end_id], grads)
                weight_decay = 0.0
            self.implementation(self.lrs[group_id], weight_decay, beta1, beta2, group.get("amsgrad"),
                                group.get("eps"), grads, start_id, end_id)
        return True


class Embedding(mindspore.nn.Cell):
    """torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx), its table named `weight` as torch's: the
    padding row starts at zero and gets no gradient, so training leaves it as it is (mindspore.nn.Embedding
    zeroes it and then trains it). The lookup at padding positions is the row itself, its gradient stopped."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings  # torch counts a negative index from the end
        table = initializer(Normal(1.0), (num_embeddings, embedding_dim), mindspore.float32).init_data().asnumpy()
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = mindspore.Parameter(mindspore.Tensor(table), name="weight")
        self.padding_idx = padding_idx
        self.padding_row = -1 if padding_idx is None else padding_idx

    def construct(self, ids):
        out = ops.gather(self.weight, ids, 0)
        keep = ops.expand_dims(ids != self.padding_row, -1).astype(out.dtype)
        return out * keep + ops.stop_gradient(out * (1 - keep))
