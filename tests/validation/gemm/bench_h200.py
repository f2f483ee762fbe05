"""Kernel timings by shape on one GPU, for the GEMM model's validation (tests/validation/gemm/).

Run once on an NVIDIA H200 SXM (PyTorch 2.11, CUDA 13.0); its output is h200-kernels.csv beside
this file. Each GPU time is the mean of one CUDA-graph replay of `reps` back-to-back calls (no host
launch cost in it), operands rotated over enough copies to exceed the 60 MB L2 (as in training,
where weights and activations do not stay in L2 between layers), random normal data, after warm-up.
The `eager_us` column (launch rows and a few GEMMs) times plain Python calls instead: GPU time plus
what the host adds. Columns follow tests/validation/gemm-bench.csv (m = output rows, n = output
columns, k = reduction; grouped GEMMs: groups x tokens_per_group rows).
"""
import csv, math, os, sys, time
import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
GPU = props.name
L2 = 60 * 2**20
START = time.time()
BUDGET_S = float(os.environ.get("BUDGET_S", "420"))
rows = []
fields = ["kind", "precision", "layout", "m", "n", "k", "groups", "tokens_per_group", "batch",
          "seq_len", "heads", "kv_heads", "head_dim", "causal", "gpu_us", "tflops", "eager_us",
          "library", "notes"]
out_path = os.path.join(OUT, "h200-kernels.csv")


def flush():
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def over_budget():
    return time.time() - START > BUDGET_S


def graph_time_us(fn, reps):
    """Mean GPU time of fn() over `reps` calls captured in one CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay(); torch.cuda.synchronize()
    best = math.inf
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b) * 1e3 / reps)
    del g
    return best


def event_time_us(fn, reps):
    """Mean GPU time of `reps` back-to-back eager calls between two CUDA events: for kernels long
    enough (attention: tens of microseconds and up) that the host's launches keep ahead of the GPU.
    Used where a CUDA graph cannot capture the call (SDPA's backward under graph capture)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = math.inf
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record(); torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b) * 1e3 / reps)
    return best


def eager_time_us(fn, reps):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e6 / reps


def copies_for(bytes_per_set):
    return max(1, min(64, math.ceil(2 * L2 / max(bytes_per_set, 1))))


def reps_for(flops, rate=6e14):
    est_us = flops / rate * 1e6 + 3
    return int(max(4, min(200, 4000 / est_us)))


def dense(m, n, k, precision, layout="NN", eager=False, notes=""):
    """layout: NN = x[m,k] @ w[k,n] (forward of a weight stored [k,n]); NT = x @ w[n,k].T (forward of
    nn.Linear, and backward-data); TN = x[k,m].T @ y[k,n] (weight gradient: reduce over tokens)."""
    torch.manual_seed(0)
    if precision == "bf16":
        dt = torch.bfloat16
        nbytes = (m * k + k * n + m * n) * 2
        c = copies_for(nbytes)
        if layout == "TN":
            A = [torch.randn(k, m, device=dev, dtype=dt) for _ in range(c)]
        else:
            A = [torch.randn(m, k, device=dev, dtype=dt) for _ in range(c)]
        B = [torch.randn(n, k, device=dev, dtype=dt) if layout == "NT" else
             torch.randn(k, n, device=dev, dtype=dt) for _ in range(c)]
        i = [0]
        def fn():
            j = i[0] % c; i[0] += 1
            a = A[j].t() if layout == "TN" else A[j]
            b = B[j].t() if layout == "NT" else B[j]
            return a @ b
        lib = "torch.matmul (cuBLAS/cuBLASLt)"
    else:  # fp8 e4m3, per-tensor scales, bf16 out: torch._scaled_mm needs A row-major, B column-major
        nbytes = m * k + k * n + m * n * 2
        c = copies_for(nbytes)
        A = [torch.randn(m, k, device=dev).to(torch.float8_e4m3fn) for _ in range(c)]
        B = [torch.randn(n, k, device=dev).to(torch.float8_e4m3fn) for _ in range(c)]
        if precision == "fp8_rowwise":
            sa = torch.ones(m, 1, device=dev); sb = torch.ones(1, n, device=dev)
        else:
            sa = torch.tensor(1.0, device=dev); sb = torch.tensor(1.0, device=dev)
        i = [0]
        def fn():
            j = i[0] % c; i[0] += 1
            return torch._scaled_mm(A[j], B[j].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
        lib = "torch._scaled_mm (cuBLASLt)" if precision == "fp8_e4m3_tensor" else "torch._scaled_mm rowwise"
        layout = "NT"
    flops = 2.0 * m * n * k
    us = graph_time_us(fn, reps_for(flops))
    row = dict(kind="gemm", precision=precision, layout=layout, m=m, n=n, k=k, gpu_us=f"{us:.3f}",
               tflops=f"{flops / us / 1e6:.1f}", library=lib, notes=notes)
    if eager:
        row["eager_us"] = f"{eager_time_us(fn, 200):.3f}"
    rows.append(row)
    del A, B


def grouped(groups, tpg, n, k, precision="bf16", notes=""):
    """MoE expert GEMM: groups experts, tpg tokens each, [tpg,k] @ [k,n] per expert, as one
    torch._grouped_mm (the kernel Megatron-Core/TE and torchtitan call for grouped experts)."""
    m = groups * tpg
    dt = torch.bfloat16
    nbytes = (m * k + groups * k * n + m * n) * 2
    c = copies_for(nbytes)
    X = [torch.randn(m, k, device=dev, dtype=dt) for _ in range(c)]
    W = [torch.randn(groups, n, k, device=dev, dtype=dt).transpose(-2, -1) for _ in range(c)]
    offs = torch.arange(tpg, m + 1, tpg, device=dev, dtype=torch.int32)
    i = [0]
    def fn():
        j = i[0] % c; i[0] += 1
        return torch._grouped_mm(X[j], W[j], offs=offs)
    flops = 2.0 * m * n * k
    us = graph_time_us(fn, reps_for(flops))
    rows.append(dict(kind="grouped_gemm", precision=precision, layout="NN", m=m, n=n, k=k,
                     groups=groups, tokens_per_group=tpg, gpu_us=f"{us:.3f}",
                     tflops=f"{flops / us / 1e6:.1f}", library="torch._grouped_mm", notes=notes))
    del X, W


def attention(b, s, h, kvh, d, causal, backend, fwd_bwd):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    dt = torch.bfloat16
    q = torch.randn(b, h, s, d, device=dev, dtype=dt, requires_grad=fwd_bwd)
    kk = torch.randn(b, kvh, s, d, device=dev, dtype=dt, requires_grad=fwd_bwd)
    v = torch.randn(b, kvh, s, d, device=dev, dtype=dt, requires_grad=fwd_bwd)
    gqa = kvh != h
    if gqa:  # expand K/V as Megatron/TE feed the kernel when it has no native GQA path
        kk2 = kk.repeat_interleave(h // kvh, dim=1).detach().requires_grad_(fwd_bwd)
        v2 = v.repeat_interleave(h // kvh, dim=1).detach().requires_grad_(fwd_bwd)
    else:
        kk2, v2 = kk, v
    flops_fwd = 4.0 * b * s * s * h * d * (0.5 if causal else 1.0)
    with sdpa_kernel([be]):
        def fwd():
            return F.scaled_dot_product_attention(q, kk2, v2, is_causal=causal)
        try:
            us_f = event_time_us(fwd, max(4, min(50, int(2e4 / (flops_fwd / 4e8 + 1)))))
        except Exception as e:  # backend refused the shape
            rows.append(dict(kind="attention_fwd", precision="bf16", seq_len=s, heads=h, kv_heads=kvh,
                             head_dim=d, batch=b, causal=int(causal), library=f"sdpa {backend}",
                             notes=f"refused: {type(e).__name__}"))
            return
        rows.append(dict(kind="attention_fwd", precision="bf16", seq_len=s, heads=h, kv_heads=kvh,
                         head_dim=d, batch=b, causal=int(causal), gpu_us=f"{us_f:.3f}",
                         tflops=f"{flops_fwd / us_f / 1e6:.1f}", library=f"sdpa {backend}",
                         notes="FLOPs 4*b*s^2*h*d, halved for causal (flash-attention's convention)"))
        if fwd_bwd:
            o = fwd()
            go = torch.randn_like(o)
            def bwd():
                return torch.autograd.grad(o, (q, kk2, v2), go, retain_graph=True)
            try:
                us_b = event_time_us(bwd, max(4, min(30, int(2e4 / (2.5 * flops_fwd / 4e8 + 1)))))
                rows.append(dict(kind="attention_bwd", precision="bf16", seq_len=s, heads=h,
                                 kv_heads=kvh, head_dim=d, batch=b, causal=int(causal),
                                 gpu_us=f"{us_b:.3f}", tflops=f"{2.5 * flops_fwd / us_b / 1e6:.1f}",
                                 library=f"sdpa {backend}",
                                 notes="backward FLOPs 2.5x forward (flash-attention's convention)"))
            except Exception as e:
                rows.append(dict(kind="attention_bwd", precision="bf16", seq_len=s, heads=h,
                                 kv_heads=kvh, head_dim=d, batch=b, causal=int(causal),
                                 library=f"sdpa {backend}", notes=f"refused: {type(e).__name__}"))


def launches():
    x = torch.zeros(1, device=dev)
    def tiny():
        x.add_(1.0)
    g_us = graph_time_us(tiny, 500)
    e_us = eager_time_us(tiny, 2000)
    rows.append(dict(kind="launch", precision="fp32", m=1, gpu_us=f"{g_us:.3f}", eager_us=f"{e_us:.3f}",
                     library="torch add_ on one element",
                     notes="gpu_us: per kernel inside a CUDA graph; eager_us: per Python call, back to back"))
    a = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    def mm():
        return a @ a
    rows.append(dict(kind="launch", precision="bf16", m=64, n=64, k=64,
                     gpu_us=f"{graph_time_us(mm, 500):.3f}", eager_us=f"{eager_time_us(mm, 2000):.3f}",
                     library="torch.matmul 64^3", notes="the smallest GEMM's floor, graph and eager"))
    big = torch.empty(2**28, device=dev, dtype=torch.bfloat16)  # 512 MiB
    big2 = torch.empty_like(big)
    def cp():
        big2.copy_(big)
    us = graph_time_us(cp, 20)
    rows.append(dict(kind="copy", precision="bf16", m=2**28, gpu_us=f"{us:.3f}",
                     tflops=f"{2 * big.numel() * 2 / us / 1e6:.1f}",
                     library="torch copy_ 512 MiB",
                     notes="tflops column holds TB/s of HBM traffic (read + write)"))
    del big, big2


def main():
    print(GPU, torch.__version__, torch.version.cuda, props.multi_processor_count, "SMs", flush=True)
    if os.environ.get("ONLY") == "attention":
        return attention_sweep()
    launches(); flush()
    # Square and max-achievable shapes (the MAMF convention: the best of a few large shapes).
    for s in (1024, 2048, 4096, 8192, 16384):
        dense(s, s, s, "bf16", eager=(s == 4096), notes="square")
    for (m, n, k) in ((8192, 8192, 8192), (4096, 14336, 4096), (8192, 28672, 8192), (16384, 8192, 8192)):
        for p in ("fp8_e4m3_tensor", "fp8_rowwise"):
            dense(m, n, k, p, notes="square/transformer")
    flush(); print("square done", time.time() - START, flush=True)
    # Transformer GEMMs: tokens m = micro-batch x sequence / CP; n, k from the model split by TP.
    models = {  # name: (hidden, ffn, q heads x head dim, kv dim): Llama 3 8B/70B, GPT-3 175B, small GPT
        "llama3-8b": (4096, 14336, 4096, 1024), "llama3-70b": (8192, 28672, 8192, 1024),
        "gpt3-175b": (12288, 49152, 12288, 12288), "gpt-1.3b": (2048, 8192, 2048, 2048),
    }
    for name, (h, ffn, qd, kvd) in models.items():
        gated = name.startswith("llama")
        for tp in (1, 2, 4, 8):
            if name == "gpt-1.3b" and tp > 2:
                continue
            shapes = {"qkv": ((qd + 2 * kvd) // tp, h), "proj": (h, qd // tp),
                      "fc1": ((2 if gated else 1) * ffn // tp, h), "fc2": (h, ffn // tp)}
            for m in (1024, 4096, 16384):
                for what, (n, k) in shapes.items():
                    if over_budget():
                        return
                    dense(m, n, k, "bf16", "NT", notes=f"{name} tp{tp} {what} forward")
                    if m == 4096:
                        dense(m, k, n, "bf16", "NN", notes=f"{name} tp{tp} {what} backward-data")
                        dense(k, n, m, "bf16", "TN", notes=f"{name} tp{tp} {what} weight-gradient")
                        if tp in (1, 8):
                            dense(m, n, k, "fp8_e4m3_tensor", notes=f"{name} tp{tp} {what} forward")
        flush(); print(name, "done", time.time() - START, flush=True)
    # Small m: the approach to the plateau (launch/occupancy bound).
    for m in (16, 64, 128, 256, 512, 2048, 8192):
        dense(m, 4096, 4096, "bf16", "NT", notes="small-m sweep")
        dense(m, 14336, 4096, "bf16", "NT", notes="small-m sweep")
    # Alignment: k not a multiple of 64 (stas00's swiglu sweep shape).
    for k in (10922, 10944, 11008):
        dense(4096, 4096, k, "bf16", "NT", notes="alignment")
    flush(); print("dense done", time.time() - START, flush=True)
    # Grouped GEMMs: fine-grained experts (DeepSeek-V3, Qwen3-30B/235B, GPT-OSS, Moonlight) and coarse
    # ones (Mixtral 8x7B/8x22B, Grok-1), per local expert count and tokens per expert.
    experts = {"deepseek-v3": (7168, 2048), "qwen3-235b": (4096, 1536), "qwen3-30b": (2048, 768),
               "gpt-oss-120b": (2880, 2880), "mixtral-8x7b": (4096, 14336),
               "mixtral-8x22b": (6144, 16384), "grok-1": (6144, 32768)}
    for name, (h, f) in experts.items():
        coarse = f >= 14336
        for groups in ((1, 2, 4, 8) if coarse else (4, 8, 16, 32)):
            for tpg in ((512, 2048, 8192) if coarse else (128, 512, 2048, 8192)):
                if over_budget():
                    return
                if groups * tpg * max(h, 2 * f) * 2 > 8e9:
                    continue
                grouped(groups, tpg, 2 * f, h, notes=f"{name} fc1 (gated, 2*ffn) forward")
                grouped(groups, tpg, h, f, notes=f"{name} fc2 forward")
        flush(); print(name, "done", time.time() - START, flush=True)
    # The same expert GEMM as one dense GEMM of the same FLOPs (the coarse-expert check).
    for (h, f) in ((4096, 14336), (6144, 32768)):
        for m in (2048, 8192):
            dense(m, 2 * f, h, "bf16", "NT", notes="dense twin of an expert fc1")
    flush()
    attention_sweep()


def attention_sweep():
    # Attention (SDPA flash = FlashAttention-2 in PyTorch; cuDNN): head dim, sequence, GQA, causal.
    for backend in ("flash", "cudnn"):
        for d in (64, 128):
            for s in (1024, 2048, 4096, 8192, 16384):
                if over_budget():
                    return
                h = 2048 // d  # H*D = 2048 and B*S = 16k: the FlashAttention papers' setup
                b = max(1, 16384 // s)
                for causal in (True, False):
                    attention(b, s, h, h, d, causal, backend, fwd_bwd=True)
        flush(); print("attention", backend, "done", time.time() - START, flush=True)
    for (h, kvh) in ((64, 8), (32, 8)):  # Llama 3 70B and 8B at TP 1 (GQA)
        attention(1, 8192, h, kvh, 128, True, "cudnn", fwd_bwd=True)
    # DeepSeek-V3 MLA: head dim 192 for q/k (128 + 64 rope), 128 for v; SDPA needs equal dims, so 192.
    attention(1, 4096, 128, 128, 192, True, "flash", fwd_bwd=True)
    attention(1, 4096, 128, 128, 192, True, "cudnn", fwd_bwd=True)


try:
    main()
finally:
    flush()
    print("rows", len(rows), "elapsed", round(time.time() - START, 1), flush=True)
