"""One-shot GPU diagnostic (helper W2d-fix; delete after use): which dS formula cuDNN's attention backward with a
custom dropout mask computes, and what Dropout_scale_inv does."""
import torch

import cudnn_lab as cl
from cudnn_lab.gpu.session import session
from cudnn_lab.reference.masks import keep_mask
from cudnn_lab.reference.sdpa_variants import logical

p = 0.1
spec = cl.SdpaSpec(batch=2, heads=4, seq_q=128, seq_kv=128, head_dim=64, dtype="bf16", direction="bwd", dropout=p,
                   dropout_seed=3, causal=True)
sess = session(spec)
ins = sess.inputs
q, k, v, o, do = (logical(spec, ins, n) for n in ("Q", "K", "V", "O", "dO"))
m = ins["Dropout_mask"].double()
keep = keep_mask(spec.batch, spec.seq_q, spec.seq_kv, causal=True, device=q.device)
s = (q @ k.transpose(-2, -1) * spec.scale).masked_fill(~keep, float("-inf"))
P = torch.softmax(s, -1)
dP = do @ v.transpose(-2, -1)
D = (do * o).sum(-1, keepdim=True)
sc = 1 / (1 - p)
H = {"autograd: P(sc*M*dP - D)": P * (sc * m * dP - D), "P(sc*M*dP - (1-p)D)": P * (sc * m * dP - (1 - p) * D),
     "P(sc*M*dP - D/(1-p))": P * (sc * m * dP - D / (1 - p)), "P(M*dP - D)": P * (m * dP - D),
     "P(M*dP - D)*sc... no mask scale on D": P * sc * (m * dP - D), "P(sc*dP - D) (no mask)": P * (sc * dP - D)}


def run(scale_inv):
    ins["Dropout_scale_inv"].fill_(scale_inv)
    e = next(e for e in sess.entries if e.build())
    sess.ensure_workspace(e.workspace_bytes or 0)
    with torch.cuda.stream(sess.stream):
        sess.call(e)()
    sess.stream.synchronize()
    return e.name, {n: sess.outputs[n].double() for n in ("dQ", "dK", "dV")}


def rel(a, b):
    return float((a - b).norm() / b.norm())


for si in (1 - p, 1.0, (1 - p) ** 2):
    name, g = run(si)
    print(f"DROPOUT scale_inv={si:.3f} plan {name}: dV vs autograd {rel(g['dV'], sess.expected['dV']):.2e}")
    for h, ds in H.items():
        dq = ds @ k * spec.scale
        dk = ds.transpose(-2, -1) @ q * spec.scale
        print(f"    {h:40s} dQ {rel(g['dQ'], dq):.2e} dK {rel(g['dK'], dk):.2e}")
