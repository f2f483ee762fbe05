// What each result means and the formula behind it: the text of the results' tooltips. A scenario
// key's tooltip is the engine's doc of it (schema(), form/fields.js), never a text here.
// Formulas follow the engine (engine/src); symbols: b micro-batch, s sequence length, h hidden
// size, V vocabulary, L layers, N parameters, t TP, p PP, v VPP, d DP, c CP.

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
    'Like MFU, but counting the work the GPUs run (recomputed forward work included) rather than Megatron-LM\'s model FLOPs.',
    'HFU = (FLOPs run + recomputed FLOPs) ÷ iteration time ÷ GPUs ÷ peak'],
  // Which count (issue 37 item 12: a reader compared it with NVIDIA's published figures): the
  // engine's model_flops_per_sample is Megatron-LM's (engine/src/model/model.cpp), within 0.5 % of
  // the FLOPs per token of NVIDIA's tables for Llama 3 (Model.DenseModelFlopsMatchNvidiasPublishedFigures).
  model_tflops_per_gpu: ['Model TFLOP/s per GPU',
    'The model\'s arithmetic per iteration spread over the GPUs and the iteration time, counted by Megatron-LM\'s ' +
    'num_floating_point_operations as NVIDIA\'s published TFLOP/s are (causal attention as half its matrix, the MoE router left out).',
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
  offload: ['Activation offload', 'Copies of the offloaded layers\' activations to host memory in the forward and ' +
    'back in the backward (plan.cpu_offloading_num_layers) not hidden behind the next layer\'s compute: the copy ' +
    'engines move one layer while the next one computes.',
  'per offloaded layer and pass: max(0, layer activations ÷ host link bandwidth − next layer\'s compute)'],

  // Memory parts
  weights: ['Weights', 'Model parameters held by one GPU of the stage.',
    'params × 2 B (bf16/fp16), × 4 B (fp32), × 3 B (fp8 + 16-bit copy); ÷ DP×CP with ZeRO-3'],
  gradients: ['Gradients', 'Gradient buffer.', 'params × 4 B (fp32 reduce) or 2 B; ÷ DP×CP with ZeRO-2'],
  optimizer_mem: ['Optimizer state', 'Adam moments and fp32 master weights.',
    'params × 12 B (8 B in fp32 training); ÷ DP×CP with the distributed optimizer'],
  activations: ['Activations', 'Tensors saved for the backward, for every micro-batch in flight on the stage.',
    'per layer ≈ s b h (34 + 5 a s / h)-style terms (Korthikanti et al.) × layers × in-flight micro-batches (PP − stage)'],
  moe_dispatch: ['MoE dispatch', "One MoE layer's token-dispatch buffers while they are in flight.",
    'alltoall: tokens × top_k × h × 2 B; allgather: the TP×EP group\'s tokens × h × 2 B'],
  ep_overlap: ['EP overlap', 'What the expert-communication overlap holds ahead: one model chunk of an extra micro-batch when pipelined, one layer without.',
    'one micro-batch of the stage\'s layers ÷ VPP (pipelined) or ÷ layers'],
  wgrad_dummies: ['Dummy weight grads', "The weight gradients Transformer Engine hands autograd while it adds the real ones into the gradient buffer: one tensor of each weight shape, cached for the whole run.",
    'one layer\'s linear weights + the output layer (last stage), 2 B each (4 B in fp32 training)'],
  allocator_mem: ['Allocator', "PyTorch's caching allocator: block rounding and fragmentation, reserved above allocated.",
    '5 % of allocated (measured 2.8-9.3 % on B200)'],
  userbuffers: ['TE userbuffers', "Transformer Engine's buffers for overlapping TP communication with GEMMs, outside PyTorch's allocator.",
    '12 buffers of s b / CP × h, 2 B (1 B for the 8 all-gather ones under fp8)'],
  deepep: ['DeepEP buffers', "DeepEP's NVLink and RDMA buffers for the flex dispatcher, outside PyTorch's allocator.",
    '10 channels × peers × tokens per channel × (2 h + 2 KiB)'],
  nccl: ['NCCL buffers', "NCCL's buffers for each communicator the GPU uses, outside PyTorch's allocator.",
    '16 channels × 9.2 MiB per communicator'],
  other_mem: ['Other', "Outside PyTorch's allocator: the CUDA context and the rest of the allowance beyond NCCL's buffers.",
    '2 GiB − NCCL buffers'],
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

  // The page's cards
  stage_map: ['Stage map', 'Which group each pipeline stage runs on and how many layers it holds, or, with replica sets, ' +
    'how many micro-batches each replica takes. “auto” lets the engine balance them.',
  'auto layers: in proportion to stage speed, within each stage\'s memory; auto micro-batches: in proportion to replica speed'],
  send: ['Blocking send', 'A pipeline send the stage waits on (activations forward, gradients back): slow across a ' +
    'group boundary on a slow link.', 'time = latency + bytes ÷ link bandwidth'],
  // The search's space, what it varies and keeps with its sizes, is the engine's words (the
  // schema's "search": engine/src/tools/search.cpp, search_space_json), shown in place of this
  // text; the card's line under its sentence says what it varied and kept for the plan on show.
  search: ['Plan search', 'The engine estimates the Megatron-LM plans the cluster admits for this model and ranks those ' +
    'that fit in memory by iteration time.',
  'DP = GPUs ÷ (TP × PP × CP); a plan is refused when the rules fail (e.g. global batch ÷ (micro-batch × DP))'],
  speedup: ['Speed-up', 'How much faster than the plan in the form: above 1× is faster.',
    'speed-up = your plan\'s iteration time ÷ this plan\'s iteration time'],
  peak_memory: ['Peak memory', 'Memory per GPU of the fullest pipeline stage (weights, gradients, optimizer state, activations, allowance).',
    'must stay within the GPU\'s capacity for the plan to be listed'],
  timeline: ['Pipeline timeline', 'One iteration on each pipeline stage (rows): forward and backward blocks per micro-batch, gradient sync and the optimizer step. Gaps are the bubble: the stage waits.',
    'idle per stage = iteration time − busy time'],
};
