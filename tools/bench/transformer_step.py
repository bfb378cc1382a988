# A small transformer training step for the overhead benchmark: a GPT-style
# decoder built from torch.nn modules (no downloads, no other package): token
# and position embeddings, 6 pre-norm blocks of causal self-attention
# (d_model 384, 6 heads) and a GELU MLP (4 x d_model), a final LayerNorm and
# a vocabulary head of 8192; batch 8 x 128 tokens of fixed random data,
# next-token cross-entropy, AdamW (its default multi-tensor form), dropout 0.1.
# A step makes several hundred kernel launches and little GPU work each, so
# on a fast GPU it is bound by launches, like torch_step.py, but with the
# kernels of a real model (attention, layer norms, GELU, embeddings).
#   python3 transformer_step.py STEPS [--profile]
#   python3 transformer_step.py --steady SECONDS --step-log FILE [--loss-log FILE]
# STEPS measured steps after 20 warm-up steps (default 200); prints one JSON
# line {"mode":"transformer","ops":STEPS,"ns_per_op":..,"ms":..,"loss":..}.
# --profile runs the measured steps under torch.profiler (as torch_step.py).
# --steady runs the step for SECONDS after the warm-up (or until SIGTERM or
# SIGINT), writing each step's end time to FILE, for tools/bench/inproc.py
# (tools/bench/steady.py says how). --warmup N changes the 20 warm-up
# steps; --device cpu runs it without a GPU (a check of the script, not a
# benchmark).
import sys
import torch
from torch import nn
from steady import parse_args, run_steady, run_timed

USAGE = "usage: transformer_step.py [STEPS] [--profile] | --steady SECONDS --step-log FILE"
VOCAB, D_MODEL, HEADS, LAYERS, SEQ, BATCH = 8192, 384, 6, 6, 128, 8


class Decoder(nn.Module):
    def __init__(self, dev):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(SEQ, D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=4 * D_MODEL, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.register_buffer("positions", torch.arange(SEQ, device=dev), persistent=False)
        # causal: position i attends to positions <= i
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf"), device=dev), 1),
                             persistent=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(self.positions)
        return self.head(self.norm(self.blocks(x, mask=self.mask)))


def main():
    args, opts = parse_args(sys.argv[1:], USAGE)
    steps = int(args[0]) if args else 200
    dev = torch.device(opts["device"])
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    model = Decoder(dev).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device=dev)
    x, y = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), y.view(-1))
        loss.backward()
        opt.step()
        return loss

    model.train()
    for _ in range(opts["warmup"]):
        step()
    sync()

    if opts["steady"] is not None:
        run_steady("transformer", step, opts["steady"], opts["step_log"], sync, opts["loss_log"])
        return

    run_timed("transformer", step, steps, sync, opts["profile"], dev.type == "cuda")

if __name__ == "__main__":
    main()
