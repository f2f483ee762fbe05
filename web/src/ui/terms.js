// What each term means and the formula behind it: the text of the page's tooltips.
// Formulas follow the engine (engine/src/*.cpp); symbols: b micro-batch, s sequence length,
// h hidden size, V vocabulary, L layers, N parameters, t TP, p PP, v VPP, d DP, c CP.

export const TERMS = {
  // Results
  iteration_time_s: ['Iteration time',
    'Wall-clock time of one training step (one global batch) on the critical path.',
    'micro-batches × slowest stage per micro-batch + pipeline fill/drain + exposed DP sync + other communication + optimizer step'],
  tokens_per_s: ['Throughput',
    'Training tokens processed per second by the whole cluster.',
    'tokens/s = global batch × sequence length ÷ iteration time'],
  mfu: ['MFU (model FLOPs utilisation)',
    'Share of the GPUs\' dense peak spent on the model\'s own arithmetic; recomputation does not count.',
    'MFU = model FLOP/s per GPU ÷ peak FLOP/s per GPU (at the plan\'s precision)'],
  hfu: ['HFU (hardware FLOPs utilisation)',
    'Like MFU, but counting recomputed forward work as useful.',
    'HFU = (model FLOPs + recomputed FLOPs) ÷ iteration time ÷ GPUs ÷ peak'],
  model_tflops_per_gpu: ['Model TFLOP/s per GPU',
    'The model\'s arithmetic per iteration spread over the GPUs and the iteration time.',
    'model FLOPs per sample = 3 × (L × layer forward FLOPs + 2 s h V); TFLOP/s = that × global batch ÷ iteration time ÷ GPUs'],
  parameters: ['Parameters',
    'Weights of the model (unpadded vocabulary), counted from its shape.',
    'N = L × (attention + MLP + norms) + V h (+ output layer unless tied) (+ positions if learned)'],
  micro_batches: ['Micro-batches per iteration',
    'Forward/backward passes each pipeline runs per iteration.',
    'micro-batches = global batch ÷ (micro-batch × DP)'],
  train_time: ['Time to train',
    'How long the cluster needs for the number of tokens you set.',
    'time = tokens ÷ tokens per second'],
  gpu_hours: ['GPU-hours',
    'Total accelerator time billed for the run.',
    'GPU-hours = GPUs × time to train (hours)'],
  cost: ['Cost',
    'GPU-hours at your price; excludes storage, network, people and failed runs.',
    'cost = GPU-hours × price per GPU-hour'],

  // Breakdown parts
  forward: ['Forward', 'Forward compute of the bottleneck stage (GEMMs, attention, element-wise).',
    'micro-batches × stage forward time per micro-batch'],
  backward: ['Backward', 'Backward compute of the bottleneck stage: a data- and a weight-gradient GEMM per forward GEMM.',
    '≈ 2 × forward GEMM time + 2.5 × attention forward'],
  recompute: ['Recompute', 'Forward work repeated during the backward to save activation memory.',
    'selective: attention core again; full: the whole layer forward again'],
  tp_comm: ['TP communication', 'Tensor-parallel collectives inside each layer that are not hidden behind compute.',
    '(all-reduce, or all-gather + reduce-scatter with SP) × 2 per layer per pass'],
  cp_comm: ['CP communication', 'Context-parallel K/V ring exchange not hidden behind attention.',
    'exposed = max(0, comm − attention) + slowdown × overlapped part'],
  ep_comm: ['Expert communication', 'Mixture of experts: the token exchange of the MoE layers (tokens to their ' +
    'experts and back, their gradients, expert-TP gathers) not hidden behind compute.',
  'all-to-all (or all-gather/reduce-scatter) per MoE layer per pass; less its overlap with the adjacent micro-batch'],
  pp_comm: ['PP send/receive', 'Pipeline activations and gradients sent between stages, on the critical path.',
    'bytes per message = b × s × h × 2 (÷ t with SP)'],
  bubble: ['Pipeline bubble', 'Idle time while the pipeline fills and drains.',
    'bubble ≈ (sum of stage times − slowest stage) ÷ VPP, per micro-batch'],
  dp_comm: ['DP sync', 'Gradient reduction (and parameter gather) across data-parallel replicas not hidden by the backward.',
    'exposed = max(remaining sync after overlap, last bucket)'],
  optimizer: ['Optimizer step', 'Adam update over this GPU\'s (sharded) fp32 state: memory-bound.',
    'time = parameters per GPU × 30 B ÷ memory bandwidth'],
  other: ['Other communication', 'Norm/embedding gradient all-reduces, gradient norm and loss scalars.',
    'sum of the small collectives after the backward'],
  host: ['CPU launches', 'Time the GPU waits for the CPU to launch its kernels: when a micro-batch has many small ' +
    'kernels (eager PyTorch, small layers or micro-batches), launching them takes longer than running them. ' +
    'Fused kernels launch fewer; CUDA graphs launch a whole layer at once. A dropless MoE layer also copies its ' +
    'token counts to the CPU, then waits while Python issues its dispatch, experts and combine.',
  'per micro-batch: max(0, kernels launched × launch time − GPU time of the stage) + per MoE layer ' +
    'max(0, fitted host time − the layer\'s forward); × micro-batches'],

  // Memory parts
  weights: ['Weights', 'Model parameters held by one GPU of the stage.',
    'params × 2 B (bf16/fp16), × 4 B (fp32), × 3 B (fp8 + 16-bit copy); ÷ DP×CP with ZeRO-3'],
  gradients: ['Gradients', 'Gradient buffer.', 'params × 4 B (fp32 reduce) or 2 B; ÷ DP×CP with ZeRO-2'],
  optimizer_mem: ['Optimizer state', 'Adam moments and fp32 master weights.',
    'params × 12 B (8 B in fp32 training); ÷ DP×CP with the distributed optimizer'],
  activations: ['Activations', 'Tensors saved for the backward, for every micro-batch in flight on the stage.',
    'per layer ≈ s b h (34 + 5 a s / h)-style terms (Korthikanti et al.) × layers × in-flight micro-batches (PP − stage)'],
  other_mem: ['Other', 'CUDA context, NCCL buffers and allocator fragmentation: an allowance.',
    '2 GiB + 5 % of the rest'],
  capacity: ['Capacity', 'Memory of one GPU.', 'from the GPU preset (memory_gib)'],

  // Census columns
  census_kind: ['Kind', 'The NCCL collective (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast).', 'as nccl-tests names them'],
  census_group: ['Group', 'The process group it runs in: tp, cp, pp, dp, ep (experts), etp (expert TP), edp (expert DP), ' +
    'embedding or model_parallel.', 'group size = GPUs that take part'],
  census_count: ['Count', 'Operations per GPU per iteration.', 'e.g. TP: 2 per layer per pass × layers × micro-batches'],
  census_bytes: ['Size', 'Bytes of one operation (the full tensor, as nccl-tests counts it).', 'e.g. b × s × h × 2 B for a layer\'s activations'],
  census_link: ['Link', 'The slowest link the group crosses.', 'intra-node fabric if the group fits in a node, else the network'],
  census_time: ['Time', 'Time of one operation and of all of them.',
    'time = latency × steps + bytes × (algorithm factor) ÷ bus bandwidth (with a half-peak ramp)'],

  // Inputs
  model: ['Model', 'A transformer from the presets, or your own shape.', 'parameters follow from layers, hidden, heads, FFN and vocabulary'],
  layers: ['Layers', 'Transformer blocks.', 'must divide by PP × VPP'],
  hidden: ['Hidden size', 'Width of the residual stream (h).', 'must divide by heads'],
  heads: ['Attention heads', 'Query heads; TP must divide them.', 'head dim = hidden ÷ heads'],
  kv_heads: ['KV heads', 'Key/value heads (grouped-query attention); equal to heads for multi-head attention.', 'must divide heads; TP must divide them'],
  ffn_hidden: ['FFN hidden size', 'Inner width of the MLP; TP must divide it.', 'gated units (SwiGLU, GeGLU) have 3 matrices, others 2'],
  vocab: ['Vocabulary', 'Tokenizer size (unpadded; Megatron pads to a multiple of 128 × TP).', 'embedding params = V × h'],
  cluster: ['Cluster', 'A node preset times a node count, or your own GPUs and links.', 'GPUs = nodes × GPUs per node'],
  nodes: ['Nodes', 'Servers in the cluster.', 'GPUs = nodes × GPUs per node'],
  gpus_per_node: ['GPUs per node', 'Accelerators sharing the intra-node fabric.', 'groups of up to this many GPUs talk over the intra-node link'],
  intra_node_link: ['Intra-node link', 'Scale-up fabric between the GPUs of a node (NVLink, xGMI, PCIe).', 'bus bandwidth per GPU'],
  inter_node_link: ['Inter-node link', 'Network port (NIC) between nodes (InfiniBand, RoCE, Ethernet).', 'node bandwidth = NICs per node × port bandwidth'],
  nics_per_node: ['NICs per node', 'Network ports per node.', 'shared by the node\'s GPUs'],
  groups: ['Groups of nodes', 'A heterogeneous cluster: pools of different nodes (say A100 and H100 servers). ' +
    'The plan then says where each pipeline stage, or each data-parallel replica, runs.',
  'GPUs = Σ nodes × GPUs per node over the groups; each group must be used exactly'],
  inter_group_link: ['Link between the groups', 'The network between two groups of nodes: pipeline sends across a ' +
    'group boundary and the gradient ring between groups run over it.',
  'default: the slowest of the groups\' own networks'],
  stage_map: ['Stage map', 'Which group each pipeline stage runs on and how many layers it holds, or, with replica sets, ' +
    'how many micro-batches each replica takes. “auto” lets the engine balance them.',
  'auto layers: in proportion to stage speed, within each stage\'s memory; auto micro-batches: in proportion to replica speed'],
  send: ['Blocking send', 'A pipeline send the stage waits on (activations forward, gradients back): slow across a ' +
    'group boundary on a slow link.', 'time = latency + bytes ÷ link bandwidth'],
  framework: ['Training software', 'The software that runs the training, and how it is configured. Its profile gives ' +
    'every flag the plan leaves out (sequence parallelism, the distributed optimizer, ZeRO, the overlaps, fused attention, ' +
    'CUDA graphs, ...) and how the engine models its kernels and gradient reduction.',
  'a flag the plan sets overrides the profile; each flag\'s “?” gives the profile\'s source for it'],
  tp: ['TP (tensor parallel)', 'Splits every layer\'s matrices across TP GPUs; they exchange activations twice per layer and pass.',
    'TP must divide heads, KV heads and FFN size; keep TP ≤ GPUs per node'],
  pp: ['PP (pipeline parallel)', 'Splits the layers into PP stages that micro-batches flow through (1F1B schedule).',
    'bubble fraction ≈ (PP − 1) ÷ (VPP × micro-batches)'],
  dp: ['DP (data parallel)', 'Model replicas, each on its share of the batch; gradients are reduced across them.',
    'DP = GPUs ÷ (TP × PP × CP): leave it derived, or set it to check the product'],
  cp: ['CP (context parallel)', 'Splits each sequence across CP GPUs; attention exchanges K/V in a ring.',
    'sequence length must divide by 2 × CP'],
  vpp: ['VPP (virtual pipeline)', 'Interleaved schedule: each GPU holds VPP chunks of layers; the bubble shrinks by VPP, p2p messages grow by VPP.',
    'layers must divide by PP × VPP; needs PP > 1'],
  micro_batch: ['Micro-batch size', 'Samples per forward/backward pass.', 'micro-batches per iteration = global batch ÷ (micro-batch × DP)'],
  global_batch: ['Global batch', 'Samples per iteration over all replicas.', 'must divide by micro-batch × DP'],
  seq_len: ['Sequence length', 'Tokens per sample (overrides the model\'s training context).', 'tokens per iteration = global batch × sequence length'],
  sequence_parallel: ['Sequence parallelism', 'Splits norm/dropout activations along the sequence inside the TP group; TP all-reduces become all-gather + reduce-scatter.',
    'those activations ÷ TP; same bytes on the wire'],
  recompute: ['Activation recomputation', 'none: keep all activations. selective: recompute the attention core. full: keep only each layer\'s input and redo its forward.',
    'memory ↓, compute ↑ (selective ≈ +attention forward, full ≈ +1 forward)'],
  distributed_optimizer: ['Distributed optimizer', 'Megatron\'s ZeRO-1: shards the optimizer state over DP × CP.',
    'optimizer memory = 12 B × params ÷ (DP × CP)'],
  precision: ['Precision', 'Number format of the GEMMs. bf16/fp16 keep fp32 master weights; fp8 runs GEMMs in fp8 (Transformer Engine), attention in bf16.',
    'peak FLOP/s from the GPU preset at this precision'],
  zero_stage: ['ZeRO stage', 'Shard optimizer state (1), + gradients (2), + parameters (3) over DP × CP. The distributed optimizer is stage 1.',
    'sharded memory ÷ (DP × CP)'],
  flash_attention: ['FlashAttention', 'Fused attention: skips the masked half, does not store scores.', 'attention FLOPs ≈ 2 b s² h ÷ t (causal)'],
  overlap_grad_reduce: ['Overlap gradient reduce', 'Reduce gradient buckets during the backward.', 'exposed ≥ one bucket'],
  overlap_param_gather: ['Overlap parameter gather', 'Gather updated parameters during the next forward (distributed optimizer).', 'exposed: none when on'],
  tp_comm_overlap: ['TP communication overlap', 'Transformer Engine userbuffers: overlap TP collectives with the GEMMs they feed.', 'exposed = max(0, comm − GEMM) + slowdown × overlapped'],
  overlap_p2p: ['Overlap p2p', 'Overlap pipeline sends with compute (interleaved schedule).', 'p2p hidden when VPP > 1'],
  grad_reduce_in_fp32: ['Reduce gradients in fp32', 'Keep and reduce gradients in fp32 (Megatron\'s default with bf16).', 'gradient bytes 4 instead of 2'],
  bf16_moments: ['Adam moments in bf16', 'The optimizer keeps Adam\'s two moments in bf16 beside fp32 master weights ' +
    '(Megatron-Core\'s precision-aware optimizer, as Megatron-Bridge\'s Moonlight-16B and DeepSeek-V4-Flash MXFP8 recipes run it).',
  'optimizer state 4 + 2 + 2 bytes per parameter instead of 4 + 4 + 4; the step reads and writes 8 bytes less per parameter'],
  tokens_to_train: ['Tokens to train', 'The size of the training run.', 'e.g. Llama 3: 15 T tokens'],
  price: ['Price per GPU-hour', 'What one GPU costs per hour (cloud list price or amortised).', 'cost = GPU-hours × price'],
  search: ['Plan search', 'The engine estimates every Megatron-LM plan the cluster admits for this model and ranks those that fit ' +
    'in memory by iteration time. It varies TP (dividing heads, KV heads and FFN size, within a node), CP (1, 2, 4, 8, where ' +
    'the software has it), PP with VPP (1, 2, 4 with PP > 1; the layers split evenly, else with the embedding and loss counted ' +
    'as layers or a lighter first and last stage, as Megatron allows: then under PP the layers on the first, each middle and the ' +
    'last stage), the micro-batch (1, 2, 4, 8) and recompute (none, ' +
    'selective, full); DP is what the GPUs leave, sequence parallelism is on with TP > 1. ' +
    'It keeps the model, the cluster, the global batch, the sequence length, the precision, the training software, the ' +
    'distributed optimizer, the ZeRO stage and the data-parallel and pipeline overlaps; TP and EP overlap are on wherever the ' +
    'software can do them. ' +
    'Clusters of one group of nodes only.',
  'DP = GPUs ÷ (TP × PP × CP); a plan is refused when the rules fail (e.g. global batch ÷ (micro-batch × DP))'],
  speedup: ['Speed-up', 'How much faster than the plan in the form: above 1× is faster.',
    'speed-up = your plan\'s iteration time ÷ this plan\'s iteration time'],
  peak_memory: ['Peak memory', 'Memory per GPU of the fullest pipeline stage (weights, gradients, optimizer state, activations, allowance).',
    'must stay within the GPU\'s capacity for the plan to be listed'],
  timeline: ['Pipeline timeline', 'One iteration on each pipeline stage (rows): forward and backward blocks per micro-batch, gradient sync and the optimizer step. Gaps are the bubble: the stage waits.',
    'idle per stage = iteration time − busy time'],
};
