# Usage programs: recurrent layers (see creation.py for the format; parameters are copied by name).

# %% lstm_batch_first
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(600)
x = torch.from_numpy(rng.standard_normal((2, 5, 4)).astype(np.float32))
lstm = nn.LSTM(4, 6, batch_first=True)


def run():
    out, (h, c) = lstm(x)
    return out, h, c

# %% lstm_seq_first
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(601)
x = torch.from_numpy(rng.standard_normal((5, 2, 3)).astype(np.float32))
lstm = nn.LSTM(input_size=3, hidden_size=4)


def run():
    out, _ = lstm(x)
    return out

# %% lstm_two_layers
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(602)
x = torch.from_numpy(rng.standard_normal((2, 4, 3)).astype(np.float32))
lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True)


def run():
    out, (h, c) = lstm(x)
    return out, h

# %% lstm_bidirectional
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(603)
x = torch.from_numpy(rng.standard_normal((2, 4, 3)).astype(np.float32))
lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)


def run():
    out, _ = lstm(x)
    return out

# %% lstm_no_bias
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(604)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
lstm = nn.LSTM(4, 4, batch_first=True, bias=False)


def run():
    out, _ = lstm(x)
    return out

# %% lstm_initial_state
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(605)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
h0 = torch.zeros(1, 2, 5)
c0 = torch.zeros(1, 2, 5)
lstm = nn.LSTM(4, 5, batch_first=True)


def run():
    out, (h, c) = lstm(x, (h0, c0))
    return out[:, -1, :]

# %% gru_batch_first
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(606)
x = torch.from_numpy(rng.standard_normal((2, 5, 4)).astype(np.float32))
gru = nn.GRU(4, 6, batch_first=True)


def run():
    out, h = gru(x)
    return out, h

# %% gru_bias_false
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(607)
x = torch.from_numpy(rng.standard_normal((3, 2, 4)).astype(np.float32))
gru = nn.GRU(4, 3, bias=False)


def run():
    out, h = gru(x)
    return h

# %% gru_bidirectional_two_layers
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(608)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
gru = nn.GRU(4, 3, num_layers=2, batch_first=True, bidirectional=True)


def run():
    out, h = gru(x)
    return out

# %% rnn_tanh
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(609)
x = torch.from_numpy(rng.standard_normal((2, 4, 3)).astype(np.float32))
rnn = nn.RNN(3, 5, batch_first=True)


def run():
    out, h = rnn(x)
    return out

# %% rnn_relu_nobias
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(610)
x = torch.from_numpy(rng.standard_normal((4, 2, 3)).astype(np.float32))
rnn = nn.RNN(3, 3, nonlinearity="relu", bias=False)


def run():
    out, h = rnn(x)
    return out

# %% lstm_cell_loop
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(611)
xs = torch.from_numpy(rng.standard_normal((3, 2, 4)).astype(np.float32))
cell = nn.LSTMCell(4, 5)


def run():
    h = torch.zeros(2, 5)
    c = torch.zeros(2, 5)
    for t in range(xs.size(0)):
        h, c = cell(xs[t], (h, c))
    return h, c

# %% gru_cell
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(612)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
h = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
cell = nn.GRUCell(4, 3)


def run():
    return cell(x, h)

# %% rnn_cell
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(613)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
cell = nn.RNNCell(4, 3)


def run():
    return cell(x)

# %% lstm_last_hidden_head
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(614)
x = torch.from_numpy(rng.standard_normal((3, 6, 2)).astype(np.float32))
lstm = nn.LSTM(2, 4, batch_first=True)
head = nn.Linear(4, 1)


def run():
    _, (h, _) = lstm(x)
    return head(h[-1])
