# The command line's contract: exit status 2 and one "error: ..." line on stderr for bad input;
# exit 0 and a JSON report for a good one. Run by CTest: cmake -DSTEPCAST=... -DSOURCE_DIR=... -P
set(example ${SOURCE_DIR}/web/examples/scenarios/llama3-70b_dgx-h100x8.json)

function(expect_error name input expected)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_${name}.json "${input}")
  execute_process(COMMAND ${STEPCAST} estimate ${CMAKE_CURRENT_BINARY_DIR}/cli_${name}.json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${name}: exit status ${rc}, expected 2 (stderr: ${err})")
  endif()
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT err MATCHES "^error: ")
    message(FATAL_ERROR "${name}: expected one 'error:' line, got: ${err}")
  endif()
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: '${expected}' not in: ${err}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "${name}: printed a report on bad input: ${out}")
  endif()
endfunction()

expect_error(not_json "{\"model\":" "not valid JSON")
expect_error(tp_heads "{\"model\": \"llama3-70b\", \"cluster\": {\"gpu\": \"h100-sxm5-80gb\", \"gpus_per_node\": 3, \"nodes\": 1, \"intra_node_link\": \"nvlink4\", \"inter_node_link\": \"ib-ndr\"}, \"plan\": {\"tp\": 3, \"global_batch\": 8}}"
             "error: plan.tp=3 must divide model.heads=64")
expect_error(unknown_key "{\"model\": \"llama3-70b\", \"clusterr\": {}}" "clusterr is not a known key")
# A rule with values that would satisfy it says them on the same line (the page's hint).
expect_error(layers_hint "{\"model\": \"deepseek-v3\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 128}, \"plan\": {\"tp\": 2, \"pp\": 8, \"ep\": 64, \"global_batch\": 4096}}"
             "error: model.layers=61 must be divisible by plan.pp*plan.vpp=8*1=8 (try: pp·vpp 1 or 61 divides 61 layers; plan.first_stage_layers=6 and plan.last_stage_layers=7 (8 on each other stage))")

# A precision the GPU does not have: NVFP4 is NVIDIA's (AMD's CDNA 4 runs MXFP8; issue 36).
expect_error(mi355x_nvfp4 "{\"model\": \"llama3-70b\", \"cluster\": {\"node\": \"mi355x-x8\", \"nodes\": 1}, \"plan\": {\"tp\": 8, \"global_batch\": 64, \"precision\": \"nvfp4\"}}"
             "error: plan.precision=nvfp4 is not supported by AMD Instinct MI355X (it has: fp32, fp16, bf16, fp8, mxfp8)")

# Two keys that say one thing: stated apart, they must agree (issue 38).
expect_error(optimizer_sharding "{\"model\": \"llama3-8b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 1}, \"plan\": {\"tp\": 8, \"global_batch\": 64, \"zero_stage\": 0, \"distributed_optimizer\": true}}"
             "error: plan.distributed_optimizer=true contradicts plan.zero_stage=0: the distributed optimizer is ZeRO stage 1 or above (give one of the two)")

# Pipeline schedules (issue 36): each needs its pipeline; a schedule the engine does not model
# (DualPipe, the bidirectional one) is no value of the key.
set(h100x4 "\"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 4}")
expect_error(schedule_no_pipeline "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"global_batch\": 64, \"schedule\": \"zero_bubble\"}}"
             "error: plan.schedule=zero_bubble needs plan.pp > 1 and plan.vpp=1, not plan.pp=1 plan.vpp=1")
expect_error(schedule_chunks "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"pp\": 4, \"vpp\": 2, \"global_batch\": 64, \"schedule\": \"zero_bubble\"}}"
             "error: plan.schedule=zero_bubble needs plan.pp > 1 and plan.vpp=1, not plan.pp=4 plan.vpp=2")
expect_error(schedule_unknown "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"pp\": 4, \"global_batch\": 64, \"schedule\": \"gpipe\"}}"
             "plan.schedule")
# DualPipe feeds both ends of an even number of ranks (DualPipe.step asserts num_ranks % 2 == 0),
# each rank one stage of each direction; half the micro-batches each way.
set(h100x3 "\"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 3}")
expect_error(dualpipe_odd "{\"model\": \"llama3-70b\", ${h100x3}, \"plan\": {\"tp\": 8, \"pp\": 3, \"global_batch\": 64, \"schedule\": \"dualpipe\"}}"
             "error: plan.schedule=dualpipe needs an even plan.pp and plan.vpp=1 (each rank holds one stage of each direction), not plan.pp=3 plan.vpp=1")
expect_error(dualpipe_chunks "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"pp\": 4, \"vpp\": 2, \"global_batch\": 64, \"schedule\": \"dualpipe\"}}"
             "not plan.pp=4 plan.vpp=2")
expect_error(dualpipe_uneven "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"pp\": 4, \"global_batch\": 9, \"schedule\": \"dualpipe\"}}"
             "error: plan.schedule=dualpipe needs an even number of micro-batches per replica (half in each direction), not 9")
# DualPipeV fills its V with 2·pp micro-batches (DualPipeV.step asserts it): 4 on pp 4 are too few.
expect_error(schedule_batches "{\"model\": \"llama3-70b\", ${h100x4}, \"plan\": {\"tp\": 8, \"pp\": 4, \"vpp\": 2, \"global_batch\": 4, \"schedule\": \"dualpipev\"}}"
             "error: plan.schedule=dualpipev needs at least 2*plan.pp=8 micro-batches per replica, not 4")

# Mixture-of-experts rules (issue 11): each names the field, its value and the rule.
set(h100x2 "\"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 2}")
expect_error(moe_ep_experts "{\"model\": \"mixtral-8x7b\", ${h100x2}, \"plan\": {\"ep\": 16, \"global_batch\": 16}}"
             "error: plan.ep=16 must divide model.moe.experts=8")
expect_error(moe_grid "{\"model\": \"qwen3-30b-a3b\", ${h100x2}, \"plan\": {\"pp\": 2, \"ep\": 16, \"global_batch\": 16}}"
             "error: plan.etp*plan.ep*plan.pp=1*16*2=32 must divide the 16 GPUs")
expect_error(moe_tp_sp "{\"model\": \"qwen3-30b-a3b\", ${h100x2}, \"plan\": {\"tp\": 2, \"ep\": 8, \"sequence_parallel\": false, \"global_batch\": 16}}"
             "error: plan.tp=2 in a mixture-of-experts model needs plan.sequence_parallel=true")
expect_error(moe_top_k "{\"model\": {\"name\": \"m\", \"layers\": 4, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1000, \"seq_len\": 1024, \"ffn_type\": \"swiglu\", \"position\": \"rope\", \"tied_embeddings\": false, \"moe\": {\"experts\": 8, \"top_k\": 9, \"ffn_hidden\": 512}}, ${h100x2}, \"plan\": {\"global_batch\": 16}}"
             "error: model.moe.top_k=9 must be <= model.moe.experts=8")
# More load on the busiest expert-parallel rank than routing can put there (issue 38): Mixtral's
# 8 experts, top-2, at ep 2 allow at most min(2, 8/2) = 2 times the mean. As JSON (`resolve
# --format json`): its rule id, path and the bound among its values.
set(imbalanced "{\"model\": \"mixtral-8x7b\", ${h100x2}, \"plan\": {\"ep\": 2, \"moe_imbalance\": 8, \"global_batch\": 16}}")
expect_error(moe_imbalance "${imbalanced}"
             "error: plan.moe_imbalance=8 is more than routing can put on one expert-parallel rank: at most min(plan.ep, model.moe.experts/model.moe.top_k) = min(2, 8/2) = 2")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_moe_imbalance_resolve.json "${imbalanced}")
execute_process(COMMAND ${STEPCAST} resolve ${CMAKE_CURRENT_BINARY_DIR}/cli_moe_imbalance_resolve.json
                        --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(JSON rule ERROR_VARIABLE bad GET "${out}" errors 0 rule)
string(JSON path ERROR_VARIABLE bad GET "${out}" errors 0 path)
string(JSON most ERROR_VARIABLE bad GET "${out}" errors 0 values most)
if(NOT rc EQUAL 2 OR NOT rule STREQUAL "moe_imbalance" OR NOT path STREQUAL "plan.moe_imbalance"
   OR NOT most EQUAL 2)
  message(FATAL_ERROR "resolve --format json, moe_imbalance 8 at ep 2: ${rc} ${out}")
endif()
expect_error(mla_rank "{\"model\": {\"name\": \"m\", \"layers\": 4, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1000, \"seq_len\": 1024, \"ffn_type\": \"swiglu\", \"position\": \"rope\", \"tied_embeddings\": false, \"attention\": {\"type\": \"mla\", \"kv_lora_rank\": 0, \"qk_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128}}, ${h100x2}, \"plan\": {\"global_batch\": 16}}"
             "error: model.attention.kv_lora_rank=0 must be")

# Recompute (issue 35): a module Megatron-Core does not have, more layers than a pipeline rank's.
expect_error(recompute_module "{\"model\": \"llama3-8b\", ${h100x2}, \"plan\": {\"global_batch\": 16, \"recompute\": \"selective\", \"recompute_modules\": \"core_attn attn\"}}"
             "error: plan.recompute_modules: 'attn' is not a module of Megatron-Core's --recompute-modules")
expect_error(recompute_layers "{\"model\": \"llama3-8b\", ${h100x2}, \"plan\": {\"pp\": 4, \"global_batch\": 16, \"recompute\": \"full\", \"recompute_num_layers\": 9}}"
             "error: plan.recompute_num_layers=9 must be between 1 and the layers of a pipeline rank, model.layers/plan.pp=32/4=8")
# Activation offloading (issue 35): more layers than the model's, with a pipeline.
expect_error(offload_layers "{\"model\": \"llama3-8b\", ${h100x2}, \"plan\": {\"global_batch\": 16, \"cpu_offloading_num_layers\": 40}}"
             "error: plan.cpu_offloading_num_layers=40 must be below model.layers=32: Megatron-Core offloads fewer layers than the model has (rule offload_layers)")
expect_error(offload_pipeline "{\"model\": \"llama3-8b\", ${h100x2}, \"plan\": {\"pp\": 2, \"global_batch\": 16, \"cpu_offloading_num_layers\": 4}}"
             "error: plan.cpu_offloading_num_layers=4 with plan.pp=2: Megatron-Core has no support for pipeline parallelism with CPU offloading (rule offload_conflict)")
expect_error(offload_module_name "{\"model\": \"llama3-8b\", ${h100x2}, \"plan\": {\"global_batch\": 16, \"offload_modules\": \"core_attn expert_fc1\"}}"
             "error: plan.offload_modules: 'expert_fc1' is a module of the MoE experts, and the model has none (the modules: attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act) (rule offload_modules)")
execute_process(COMMAND ${STEPCAST} estimate ${example} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"iteration_time_s\"")
  message(FATAL_ERROR "estimate of the example failed (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} estimate ${example} --format text RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "iteration time")
  message(FATAL_ERROR "text report failed (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} estimate missing.json RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "cannot read missing.json")
  message(FATAL_ERROR "missing file: ${rc} ${err}")
endif()

# Batch mode: one report or error object per line, exit 2 when any line failed.
file(READ ${example} scenario)
string(REPLACE "\n" " " scenario "${scenario}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_batch.jsonl "${scenario}\n{\"model\": \"nope\"}\n")
execute_process(COMMAND ${STEPCAST} estimate --batch ${CMAKE_CURRENT_BINARY_DIR}/cli_batch.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines lines)
if(NOT rc EQUAL 2 OR NOT lines EQUAL 2 OR NOT out MATCHES "iteration_time_s"
   OR NOT out MATCHES "unknown_preset")
  message(FATAL_ERROR "batch: rc=${rc} lines=${lines}: ${out}")
endif()

foreach(kind gpus links nodes models)
  execute_process(COMMAND ${STEPCAST} presets ${kind} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR out STREQUAL "")
    message(FATAL_ERROR "presets ${kind} failed")
  endif()
endforeach()
execute_process(COMMAND ${STEPCAST} presets nope RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "presets nope should fail with 2, got ${rc}")
endif()

# Links: a link and a JSON file are interchangeable.
execute_process(COMMAND ${STEPCAST} link ${example} --base https://example.org/ --tokens 1e12
                RESULT_VARIABLE rc OUTPUT_VARIABLE link OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT link MATCHES "^https://example.org/#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&dp=2&gbs=512&sp=1&rc=selective&do=1&seq=4096&tokens=[0-9]+&end$")
  message(FATAL_ERROR "link: ${rc} ${link}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --link ${link} RESULT_VARIABLE rc OUTPUT_VARIABLE from_link)
execute_process(COMMAND ${STEPCAST} estimate ${example} OUTPUT_VARIABLE from_file)
string(JSON t_link GET "${from_link}" iteration_time_s)
string(JSON t_file GET "${from_file}" iteration_time_s)
if(NOT rc EQUAL 0 OR NOT t_link STREQUAL t_file)
  message(FATAL_ERROR "estimate --link gave ${t_link}, the file ${t_file}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --link "http://x/#v=1&model=%3Cscript%3E"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "is not a model preset")
  message(FATAL_ERROR "bad link: ${rc} ${err}")
endif()
# Issue 38 §2: a link Stepcast writes is one a reader reads. Tokens past 2^53 are written without
# an exponent's '+' (read as a space), and read back; tokens past the reader's 1e21 and a base
# with a newline (a forged second line) are refused when writing, in one line.
execute_process(COMMAND ${STEPCAST} link ${example} --tokens 1e16 RESULT_VARIABLE rc
                OUTPUT_VARIABLE big OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT big MATCHES "&tokens=1e16&end$")
  message(FATAL_ERROR "link --tokens 1e16: ${rc} ${big}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --link ${big} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "estimate --link ${big}: ${rc}")
endif()
# Issue 37 item 9: a link cut after gbs=512 (its end marker lost) is refused as incomplete.
string(FIND "${link}" "&sp=1" cut_at)
string(SUBSTRING "${link}" 0 ${cut_at} cut)
execute_process(COMMAND ${STEPCAST} estimate --link ${cut} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "^error: link: this link is incomplete: it stops after 'gbs=512'[^\n]*\n$")
  message(FATAL_ERROR "estimate --link ${cut}: ${rc} ${out} ${err}")
endif()
execute_process(COMMAND ${STEPCAST} link ${example} --tokens 1e22 RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "^error: link: tokens=1e\\+22 must be between 0 and 1e\\+21\n$")
  message(FATAL_ERROR "link --tokens 1e22: ${rc} ${out} ${err}")
endif()
execute_process(COMMAND ${STEPCAST} link ${example} --base "http://x/\nerror: forged"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "^error: link: the base address http://x/%0Aerror: forged holds byte 0x0A at byte 9[^\n]*\n$")
  message(FATAL_ERROR "link --base with a newline: ${rc} ${out} ${err}")
endif()
execute_process(COMMAND ${STEPCAST} link ${example} --price -1 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--price=-1 must be a positive number")
  message(FATAL_ERROR "link --price -1: ${rc} ${err}")
endif()

# --report summary: each stage without its census operations, every other key as in the full
# report (in estimate, --batch and --link); --report with anything else is bad input.
execute_process(COMMAND ${STEPCAST} estimate ${example} --report summary RESULT_VARIABLE rc
                OUTPUT_VARIABLE summary)
execute_process(COMMAND ${STEPCAST} estimate ${example} --report full OUTPUT_VARIABLE full)
execute_process(COMMAND ${STEPCAST} estimate ${example} OUTPUT_VARIABLE plain)
string(JSON t_summary GET "${summary}" iteration_time_s)
string(JSON t_full GET "${full}" iteration_time_s)
string(JSON ops ERROR_VARIABLE no_ops GET "${summary}" stages 0 communication)
string(JSON full_ops LENGTH "${full}" stages 0 communication)
if(NOT rc EQUAL 0 OR NOT t_summary STREQUAL t_full OR no_ops STREQUAL "NOTFOUND"
   OR full_ops LESS 1 OR NOT full STREQUAL plain)
  message(FATAL_ERROR "--report summary: rc=${rc} ${t_summary} vs ${t_full}, ops ${no_ops}: ${summary}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --batch ${CMAKE_CURRENT_BINARY_DIR}/cli_batch.jsonl
                --report summary RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 2 OR NOT out MATCHES "iteration_time_s" OR out MATCHES "communication")
  message(FATAL_ERROR "batch --report summary: rc=${rc}: ${out}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --link ${link} --report summary RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "iteration_time_s" OR out MATCHES "communication")
  message(FATAL_ERROR "estimate --link --report summary: rc=${rc}: ${out}")
endif()
foreach(args "${example};--report;short" "--batch;${CMAKE_CURRENT_BINARY_DIR}/cli_batch.jsonl;--report;x"
             "${example};--report")
  execute_process(COMMAND ${STEPCAST} estimate ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT rc EQUAL 2 OR NOT lines EQUAL 1 OR NOT err MATCHES "^error: --report"
     OR NOT out STREQUAL "")
    message(FATAL_ERROR "estimate ${args}: rc=${rc}: ${err}")
  endif()
endforeach()

# Plan search: a ranked table, or JSON with the best plans.
execute_process(COMMAND ${STEPCAST} search ${example} --top 3 --format json RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
string(JSON best_count LENGTH "${out}" best)
if(NOT rc EQUAL 0 OR NOT best_count EQUAL 3)
  message(FATAL_ERROR "search: ${rc} ${out}")
endif()
# Llama 3.1 405B's 126 layers on 8 stages: the embedding and the loss counted as layers, 15 on
# the first and last stage, 16 on each between (128 / 8), a column of the table and every
# stage's count in the JSON.
set(llama405 ${SOURCE_DIR}/web/examples/scenarios/llama3.1-405b_hgx-h200x56_fp8.json)
execute_process(COMMAND ${STEPCAST} search ${llama405} --top 1 RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "layers/stage\n +1 +4 +8 [^\n]* 15/16/15\n")
  message(FATAL_ERROR "search's layers per stage: ${rc} ${out}")
endif()
execute_process(COMMAND ${STEPCAST} search ${llama405} --top 1 --format json RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
string(JSON layers GET "${out}" best 0 stage_layers)
string(REGEX REPLACE "[ \n]" "" layers "${layers}")
if(NOT rc EQUAL 0 OR NOT layers STREQUAL "[15,16,16,16,16,16,16,15]")
  message(FATAL_ERROR "search --format json stage_layers: ${rc} ${layers}")
endif()
execute_process(COMMAND ${STEPCAST} search ${example} --top 0 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--top=0 must be a whole number")
  message(FATAL_ERROR "search --top 0: ${rc} ${err}")
endif()

# The scaling sweep: the example at other node counts and TP degrees. 1 and 2 nodes hold no
# replica of TP 8 x PP 4 (the rule's id in the JSON), 8 is the example's own (100 %), TP 16 does
# not divide Llama 3 70B's 8 KV heads; a request past the sweep's budget is refused.
execute_process(COMMAND ${STEPCAST} scaling ${example} --format json RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
string(JSON first_rule GET "${out}" nodes 0 error rule)
string(JSON own_nodes GET "${out}" nodes 3 nodes)
string(JSON own_efficiency GET "${out}" nodes 3 scaling_efficiency)
string(JSON tp16 GET "${out}" tp 4 error values dividend_key)
if(NOT rc EQUAL 0 OR NOT first_rule STREQUAL "whole_replicas" OR NOT own_nodes EQUAL 8
   OR NOT own_efficiency STREQUAL "1.0" OR NOT tp16 STREQUAL "model.kv_heads")
  message(FATAL_ERROR "scaling --format json: ${rc} ${out}")
endif()
execute_process(COMMAND ${STEPCAST} scaling ${example} --nodes 4,8 --tp 8 RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\n +8\\* +64 [^\n]* 100\n" OR NOT out MATCHES "\n +4 +32 ")
  message(FATAL_ERROR "scaling (text): ${rc} ${out}")
endif()

# How many GPUs for a deadline: 15 T tokens ("15T" as people write it) in 60 days. The sweep
# starts at the fewest nodes the H100's peak allows (6 x 70.6e9 x 15e12 FLOPs over 989.4 TFLOP/s
# for 60 days: 1,238 GPUs and more, 155 nodes; attention at 4,096 tokens makes it 159), a power of two:
# 256; the JSON names the counts it tried and the cheapest.
execute_process(COMMAND ${STEPCAST} deadline ${example} --tokens 15T --days 60 RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^15 T tokens within 60 days"
   OR NOT out MATCHES "fewer than 159 nodes cannot" OR NOT out MATCHES "\n +256 +2048 "
   OR NOT out MATCHES "Cheapest that meets it \\(\\*\\): [0-9]+ nodes")
  message(FATAL_ERROR "deadline (text): ${rc} ${out}")
endif()
execute_process(COMMAND ${STEPCAST} deadline ${example} --tokens 2.5e12 --days 30 --nodes 64,8
                        --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(JSON first GET "${out}" points 0 nodes)
string(JSON tokens GET "${out}" tokens)
string(JSON tp GET "${out}" points 1 plan tp)
if(NOT rc EQUAL 0 OR NOT first EQUAL 8 OR NOT tokens STREQUAL "2500000000000.0" OR tp LESS 1)
  message(FATAL_ERROR "deadline --format json: ${rc} ${out}")
endif()

# A torchtitan job config in and out: the 64-GPU Llama 3 70B shape (FSDP over what TP 8 leaves),
# its plan written back as TOML that imports to the same plan.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/titan.toml "[model]\nname = \"llama3\"\nflavor = \"70B\"\n"
     "[training]\nlocal_batch_size = 2\nseq_len = 8192\n[optimizer]\nlr = 1.5e-4\n"
     "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n")
execute_process(COMMAND ${STEPCAST} import torchtitan ${CMAKE_CURRENT_BINARY_DIR}/titan.toml
                        --nodes 8 --format scenario
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(JSON dp GET "${out}" plan dp)
if(NOT rc EQUAL 0 OR NOT dp EQUAL 8 OR NOT err MATCHES "ignored: optimizer.lr = 0.00015")
  message(FATAL_ERROR "import torchtitan: ${rc} ${out} ${err}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/titan.json "${out}")
execute_process(COMMAND ${STEPCAST} export torchtitan ${CMAKE_CURRENT_BINARY_DIR}/titan.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "data_parallel_shard_degree = 8\n"
   OR NOT out MATCHES "flavor = \"70B\"")
  message(FATAL_ERROR "export torchtitan: ${rc} ${out}")
endif()

# Hostile input (issue 13). A batch survives any line: a line nested 200,000 arrays deep and a
# line of ten million characters each give an error object, the lines around them their reports.
string(REPEAT "[" 200000 open)
string(REPEAT "]" 200000 close)
string(REPEAT "[" 10000000 huge)
string(REPLACE "\"global_batch\": 512" "\"global_batch\": 512, \"cp\": ${open}${close}" deep
       "${scenario}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_hostile.jsonl
     "${scenario}\n${deep}\n${huge}\n${scenario}\n")
execute_process(COMMAND ${STEPCAST} estimate --batch ${CMAKE_CURRENT_BINARY_DIR}/cli_hostile.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines count)
if(NOT rc EQUAL 2 OR NOT count EQUAL 4 OR NOT out MATCHES
   "^{\"bottleneck_stage[^\n]*\n{\"error[^\n]*more than 32 levels deep[^\n]*\n{\"error[^\n]*at most 1048576 are read[^\n]*\n{\"bottleneck_stage[^\n]*\n$")
  message(FATAL_ERROR "hostile batch: rc=${rc}, ${count} lines")
endif()

# Every error is one line: keys, values and arguments holding newlines, ESC or DEL are escaped.
string(ASCII 27 esc)
string(ASCII 127 del)
expect_error(key_newline "{\"model\": \"llama3-8b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 1}, \"plan\": {\"global_batch\": 8, \"a\\nerror: b\\u001b\\u007f\": 1}}"
             "error: plan.a\\nerror: b\\u001b\\u007f is not a known key")
execute_process(COMMAND ${STEPCAST} estimate --link "http://x/#v=2&model=llama3-8b%0Aerror%3A%20fake&node=dgx-h100&nodes=1&gbs=8"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: model=\"llama3-8b\\\\nerror: fake\" is not a model preset[^\n]*\n$")
  message(FATAL_ERROR "forged error line: ${rc} ${err}")
endif()
foreach(args "estimate;${example};--format;te\nxt${esc}[31m${del}" "presets;a\nb"
             "estimate;missing\nfile" "search;${example};--top;1\n2")
  execute_process(COMMAND ${STEPCAST} ${args} RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines count)
  if(NOT rc EQUAL 2 OR NOT count EQUAL 1 OR err MATCHES "${esc}|${del}")
    message(FATAL_ERROR "arguments ${args}: ${rc} ${err}")
  endif()
endforeach()

# The traffic matrix (issue 14): bad flags exit 2 with one line; CSV and JSON of the example.
# `stepcast ARGN...` exits 2 with one "error:" line holding `expected` and prints nothing.
function(expect_exit_2 label expected)
  execute_process(COMMAND ${STEPCAST} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT rc EQUAL 2 OR NOT lines EQUAL 1 OR NOT err MATCHES "^error: " OR NOT out STREQUAL "")
    message(FATAL_ERROR "${label}: rc=${rc} out=${out} err=${err}")
  endif()
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${label}: '${expected}' not in: ${err}")
  endif()
endfunction()
function(expect_traffic_error name expected)
  expect_exit_2("traffic ${name}" "${expected}" traffic ${ARGN})
endfunction()
# The scaling sweep past its budget, and a TP degree that cannot be.
string(REPEAT "1," 64 many)
expect_exit_2("scaling past its budget" "one sweep makes at most 64" scaling ${example} --nodes ${many}1)
expect_exit_2("scaling --tp 0" "--tp=0 must be whole numbers" scaling ${example} --tp 0)
expect_exit_2("deadline without --days" "deadline needs --days" deadline ${example} --tokens 1T)
expect_exit_2("deadline --days 0" "--days=0 must be a number above 0" deadline ${example}
              --tokens 1T --days 0)
expect_exit_2("deadline --tokens 15X" "--tokens=15X must be a number above 0" deadline ${example}
              --tokens 15X --days 30)
expect_exit_2("deadline without tokens" "deadline needs --tokens" deadline ${example} --days 30)
expect_exit_2("import torchtitan without nodes" "give the node count" import torchtitan
              ${CMAKE_CURRENT_BINARY_DIR}/titan.toml)
expect_exit_2("import torchtitan, not TOML" "not a TOML job config" import torchtitan ${example})
expect_traffic_error(level "--level=cabinet must be gpu or node" ${example} --level cabinet)
expect_traffic_error(by "--by=phase must be kind or tier" ${example} --by phase)
expect_traffic_error(format "--format=text must be json or csv" ${example} --format text)
expect_traffic_error(no_file "traffic takes one scenario file" --level gpu)
expect_traffic_error(missing_value "--level needs a value" ${example} --level)
expect_traffic_error(unknown "unknown option --heatmap" ${example} --heatmap)
expect_error(rank_order "{\"model\": \"llama3-8b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 2}, \"plan\": {\"tp\": 8, \"global_batch\": 8, \"rank_order\": \"tp-dp-pp\"}}"
             "error: plan.rank_order=\"tp-dp-pp\" must name tp, cp, ep, dp and pp once each")
execute_process(COMMAND ${STEPCAST} traffic ${example} --format csv --by tier RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^from,to,tier,scale_up_bytes,scale_out_bytes,total_bytes\n0,1,scale_up,")
  message(FATAL_ERROR "traffic csv (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} traffic ${example} --level node RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"level\": \"node\"" OR NOT out MATCHES "\"inside_node\": true"
   OR NOT out MATCHES "\"fraction_of_peak\"" OR NOT out MATCHES "\"busiest_nic_bytes_per_s\""
   OR NOT out MATCHES "\"curves\"")
  message(FATAL_ERROR "traffic json (${rc}): ${out}")
endif()

# import / export (issue 16 items 14, 15): bad input is one "error:" line naming the key or flag,
# exit 2, nothing on stdout; good input prints the model, the scenario or the arguments.
function(expect_io_error name input expected)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_io_${name}.txt "${input}")
  expect_exit_2("${name}" "${expected}" ${ARGN} ${CMAKE_CURRENT_BINARY_DIR}/cli_io_${name}.txt)
endfunction()
expect_io_error(hf_not_json "{\"architectures\": [" "not valid JSON" import hf-config)
expect_io_error(hf_arch "{\"architectures\": [\"BertForMaskedLM\"]}"
                "architectures[0]=BertForMaskedLM is not one the importer reads" import hf-config)
expect_io_error(hf_missing "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 4096}"
                "config.json has no num_hidden_layers" import hf-config)
expect_io_error(hf_type "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": \"32\"}"
                "config.json num_hidden_layers=\"32\" must be a whole number" import hf-config)
# Issue 37 item 1: an imported model's scenario gets a link (its shape whole), and the link
# says on stderr what it leaves out (the model's source, text for people); the link estimates
# what the imported scenario does.
execute_process(COMMAND ${STEPCAST} import hf-config ${SOURCE_DIR}/tests/fixtures/hf-config/deepseek-v2-lite.json --format scenario
                RESULT_VARIABLE rc OUTPUT_VARIABLE imported)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_imported.json "${imported}")
execute_process(COMMAND ${STEPCAST} link ${CMAKE_CURRENT_BINARY_DIR}/cli_imported.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE imported_link ERROR_VARIABLE err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT imported_link MATCHES "^http://localhost:8080/#v=3&model=custom&.*m\\.att=.*m\\.moe=.*&end$"
   OR NOT err MATCHES "^note: the link leaves out model.source[^\n]*\n$")
  message(FATAL_ERROR "link of an imported model: ${rc} ${imported_link} ${err}")
endif()
execute_process(COMMAND ${STEPCAST} estimate --link ${imported_link} OUTPUT_VARIABLE from_link)
execute_process(COMMAND ${STEPCAST} estimate ${CMAKE_CURRENT_BINARY_DIR}/cli_imported.json OUTPUT_VARIABLE from_file)
string(JSON t_link GET "${from_link}" iteration_time_s)
string(JSON t_file GET "${from_file}" iteration_time_s)
if(NOT t_link STREQUAL t_file)
  message(FATAL_ERROR "imported model's link: ${t_link} s, the file ${t_file} s")
endif()
expect_io_error(hf_format "{}" "--format=yaml must be model or scenario" import hf-config --format yaml)
expect_io_error(mg_missing "--hidden-size 1024" "--num-layers is required" import megatron-args)
expect_io_error(mg_value "--num-layers 4 --tensor-model-parallel-size"
                "--tensor-model-parallel-size needs a value" import megatron-args)
expect_io_error(mg_quote "--num-layers 4 --data-path 'x" "unclosed ' quote" import megatron-args)
expect_io_error(mg_node "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py"
                "node dgx-z is not a node preset" import megatron-args --node dgx-z)
expect_io_error(kind "{}" "import yaml: the kinds are hf-config, megatron-args" import yaml)
expect_io_error(export_kind "{}" "export slurm: the kinds are megatron-args, bridge-recipe, torchrun"
                export slurm)
expect_io_error(export_invalid "{\"model\": \"llama3-70b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 1}, \"plan\": {\"tp\": 3, \"global_batch\": 8}}"
                "plan.tp=3 must divide model.heads=64" export megatron-args)
execute_process(COMMAND ${STEPCAST} import hf-config ${SOURCE_DIR}/tests/fixtures/hf-config/meta-llama-3-8b.json
                --format scenario RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"node\": \"dgx-h100\"" OR NOT out MATCHES "\"ffn_hidden\": 14336")
  message(FATAL_ERROR "import hf-config --format scenario (${rc}): ${out}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_io_imported.json "${out}")
execute_process(COMMAND ${STEPCAST} estimate ${CMAKE_CURRENT_BINARY_DIR}/cli_io_imported.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"iteration_time_s\"")
  message(FATAL_ERROR "estimate of an imported config (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} export torchrun ${example} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "torchrun --nnodes 8 --nproc-per-node 8"
   OR NOT out MATCHES "--tensor-model-parallel-size 8 \\\\\n")
  message(FATAL_ERROR "export torchrun (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} export bridge-recipe --link ${link} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "cfg.model.tensor_model_parallel_size = 8\n")
  message(FATAL_ERROR "export bridge-recipe --link (${rc}): ${out}")
endif()
# Calibration (issue 15): nccl-tests output fits a link; a measured run calibrates an estimate.
set(nccl ${SOURCE_DIR}/tests/engine/fixtures/nccl-tests)
expect_exit_2(nccl_not_output "not nccl-tests output" calibrate --nccl-tests ${example})
expect_exit_2(nccl_no_file "needs one or more nccl-tests output files" calibrate --nccl-tests)
expect_exit_2(nccl_nics "--nics-per-node=0 must be a whole number" calibrate --nccl-tests
                     ${nccl}/all_reduce_perf-2node-ib-ndr.txt --nics-per-node 0)
expect_exit_2(nccl_tiers "runs inside one node and across nodes" calibrate --nccl-tests
                     ${nccl}/all_reduce_perf-2node-ib-ndr.txt ${nccl}/all_gather_perf-dgx-h100-8gpu.txt)
execute_process(COMMAND ${STEPCAST} calibrate --nccl-tests ${nccl}/all_reduce_perf-2node-ib-ndr.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"scope\": \"inter_node\"" OR NOT out MATCHES "\"busbw_GBps\": 44\\.")
  message(FATAL_ERROR "calibrate --nccl-tests (${rc}): ${out}")
endif()
# Issue 38 §2 and 37 item 6: refused at fit time, in one line naming the field, value and rule:
# nccl-tests times converted to seconds, output of another GPU than --gpu, a GEMM table at 0.1 %
# of the peak, and a measured step 100 times the prediction.
file(READ ${nccl}/all_reduce_perf-dgx-h100-8gpu.txt nccl_text)
string(REGEX REPLACE "\n( +1048576 +262144 +float +sum +-1 +)[0-9.]+ " "\n\\1 0.0001 " nccl_seconds "${nccl_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_all_reduce_perf_seconds.txt "${nccl_seconds}")
expect_exit_2(nccl_seconds "must be size/time" calibrate --nccl-tests
              ${CMAKE_CURRENT_BINARY_DIR}/cli_all_reduce_perf_seconds.txt)
expect_exit_2(nccl_gpu "nccl-tests ran on NVIDIA H100 80GB HBM3 (h100), and this cluster's GPU is a100-sxm4-80gb"
              calibrate --nccl-tests ${nccl}/all_reduce_perf-dgx-h100-8gpu.txt --gpu a100-sxm4-80gb)
execute_process(COMMAND ${STEPCAST} calibrate --nccl-tests ${nccl}/all_reduce_perf-dgx-h100-8gpu.txt
                --gpu h100-sxm5-80gb RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate --nccl-tests --gpu h100-sxm5-80gb: ${rc}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_gemm_slow.csv "m,n,k,dtype,tflops\n4096,4096,4096,bf16,0.65\n8192,8192,8192,bf16,0.7\n")
expect_exit_2(gemm_slow "the fitted gemm_efficiency=0.000" calibrate --gemm
              ${CMAKE_CURRENT_BINARY_DIR}/cli_gemm_slow.csv --gpu h100-sxm5-80gb)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_far.json
     "{\"runs\": [{\"plan\": {\"tp\": 8, \"pp\": 4, \"global_batch\": 512}, \"measured_iteration_s\": 3000}]}")
expect_exit_2(cal_far "calibration.runs[0].measured_iteration_s=3000 s is" estimate ${example}
              --calibration ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_far.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_negative.json
     "{\"runs\": [{\"plan\": {\"tp\": 8, \"pp\": 4, \"global_batch\": 512}, \"measured_iteration_s\": -3}]}")
expect_exit_2(cal_negative "calibration.runs[0].measured_iteration_s=-3" estimate ${example}
                     --calibration ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_negative.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_plan.json
     "{\"runs\": [{\"plan\": {\"tp\": 8, \"pp\": 16, \"global_batch\": 512}, \"measured_iteration_s\": 30}]}")
expect_exit_2(cal_plan "calibration.runs[0]: the cluster's 64 GPUs are not divisible" search ${example}
                     --calibration ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_plan.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_ok.json
     "{\"calibration\": {\"runs\": [{\"plan\": {\"tp\": 8, \"pp\": 4, \"global_batch\": 512}, \"measured_iteration_s\": 45}]}}")
execute_process(COMMAND ${STEPCAST} estimate ${example} --calibration
                ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_ok.json RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"compute_scale_fitted\": true" OR NOT out MATCHES "one measured run")
  message(FATAL_ERROR "estimate --calibration (${rc}): ${out}")
endif()
execute_process(COMMAND ${STEPCAST} link ${example} --calibration
                ${CMAKE_CURRENT_BINARY_DIR}/cli_cal_ok.json RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "&cal=%7B%22compute_scale%22" OR out MATCHES "runs")
  message(FATAL_ERROR "link --calibration (${rc}): ${out}")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_gemm.csv "m,n,k,dtype,tflops\n4096,4096,4096,bf16,650\n8192,8192,8192,bf16,700\n")
expect_exit_2(gemm_no_gpu "--gemm needs --gpu ID" calibrate --gemm ${CMAKE_CURRENT_BINARY_DIR}/cli_gemm.csv)
expect_exit_2(gemm_garbled "line 1: the header must name" calibrate --gemm ${example} --gpu h100-sxm5-80gb)
execute_process(COMMAND ${STEPCAST} calibrate --gemm ${CMAKE_CURRENT_BINARY_DIR}/cli_gemm.csv
                --gpu h100-sxm5-80gb RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"gemm_efficiency\": 0\\.7")
  message(FATAL_ERROR "calibrate --gemm (${rc}): ${out}")
endif()

# The README's sample of `stepcast estimate --format text` is what the command prints (it had gone
# stale after a refit): its lines up to "  ...", each the same as the output's.
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "```\nLlama 3 70B (70.55 B parameters)" start)
if(start EQUAL -1)
  message(FATAL_ERROR "README.md: the sample of stepcast estimate --format text is missing")
endif()
math(EXPR start "${start} + 4")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "  ...\n```" stop)
string(SUBSTRING "${rest}" 0 ${stop} sample)
execute_process(COMMAND ${STEPCAST} estimate ${example} --format text
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(LENGTH "${sample}" length)
string(SUBSTRING "${out}" 0 ${length} head)
if(NOT rc EQUAL 0 OR NOT head STREQUAL sample)
  message(FATAL_ERROR "README.md's sample output differs from stepcast estimate ${example} "
                      "--format text:\n${head}\n--- README:\n${sample}")
endif()

# Issue 38 §2: budgets before reading, one rule for repeated keys, and a file that holds no runs.
# A scenario past 1 MiB is refused by its size (a file) or after its first MiB (standard input).
string(REPEAT "                " 65600 padding)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_big.json "{${padding}}")
expect_exit_2(big_file "cli_big.json is over 1048576 bytes, the most this command reads" estimate
              ${CMAKE_CURRENT_BINARY_DIR}/cli_big.json)
execute_process(COMMAND ${STEPCAST} estimate - INPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/cli_big.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err STREQUAL "error: standard input is over 1048576 bytes, the most this command reads\n")
  message(FATAL_ERROR "estimate - of 1 MiB: ${rc} ${err}")
endif()
expect_exit_2(big_nccl "is over 1048576 bytes" calibrate --nccl-tests ${CMAKE_CURRENT_BINARY_DIR}/cli_big.json)
# A GEMM table past 8 MiB (cli_io.h: kMaxGemmTableBytes, 100,000 rows of ~80 bytes) likewise:
# by its size before a byte of it is read, and standard input after its first 8 MiB.
string(REPEAT "${padding}" 8 gemm_rows)  # 8 x 1,049,600 bytes
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_big_gemm.csv "m,n,k,dtype,tflops\n${gemm_rows}")
expect_exit_2(big_gemm "cli_big_gemm.csv is over 8388608 bytes, the most this command reads"
              calibrate --gemm ${CMAKE_CURRENT_BINARY_DIR}/cli_big_gemm.csv --gpu h100-sxm5-80gb)
execute_process(COMMAND ${STEPCAST} calibrate --gemm - --gpu h100-sxm5-80gb
                INPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/cli_big_gemm.csv
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR
   NOT err STREQUAL "error: standard input is over 8388608 bytes, the most this command reads\n")
  message(FATAL_ERROR "calibrate --gemm - of 8 MiB: ${rc} ${err}")
endif()
expect_error(duplicate_key "{\"model\": \"llama3-70b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 8}, \"plan\": {\"tp\": 8, \"tp\": 4, \"global_batch\": 8}}"
             "has the key \"tp\" twice in one object: give it once")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli_not_runs.csv "a,b\n1,2\n")
expect_exit_2(validate_not_runs "no runs read" validate ${CMAKE_CURRENT_BINARY_DIR}/cli_not_runs.csv)

# Issue 36, optimizers: Muon where the software has none, and with what Megatron-Core's Muon
# refuses (ZeRO-2/3, fp16): one line naming the field, its value and the rule.
set(h100x1 "\"model\": \"llama3-8b\", \"cluster\": {\"node\": \"dgx-h100\", \"nodes\": 1}")
expect_error(muon_deepspeed "{${h100x1}, \"plan\": {\"framework\": \"deepspeed\", \"optimizer\": \"muon\", \"global_batch\": 64}}"
             "error: plan.optimizer=\"muon\": deepspeed cannot do it (not modelled: DeepSpeed's Muon")
expect_error(muon_megatron_2021 "{${h100x1}, \"plan\": {\"framework\": \"megatron-lm-2021\", \"optimizer\": \"muon\", \"global_batch\": 64}}"
             "error: plan.optimizer=\"muon\": megatron-lm-2021 cannot do it (Megatron-LM 2.x's --optimizer offers adam and sgd only")
expect_error(muon_megatron_fsdp "{${h100x1}, \"plan\": {\"framework\": \"megatron-fsdp\", \"optimizer\": \"muon\", \"global_batch\": 64}}"
             "error: plan.optimizer=\"muon\": megatron-fsdp cannot do it (Megatron-LM asserts emerging optimizers off Megatron FSDP")
expect_error(muon_zero3 "{${h100x1}, \"plan\": {\"optimizer\": \"muon\", \"zero_stage\": 3, \"global_batch\": 64}}"
             "error: plan.zero_stage=3 with plan.optimizer=muon: Megatron-Core's Muon shards only its optimizer state")
expect_error(muon_fp16 "{${h100x1}, \"plan\": {\"optimizer\": \"muon\", \"precision\": \"fp16\", \"global_batch\": 64}}"
             "error: plan.precision=fp16 with plan.optimizer=muon: Megatron-Core refuses emerging optimizers with fp16")
expect_error(sgd_distributed "{${h100x1}, \"plan\": {\"optimizer\": \"sgd\", \"global_batch\": 64}}"
             "error: plan.optimizer=\"sgd\" with plan.distributed_optimizer=true: megatron-core cannot do it (Megatron-Core's distributed optimizer asserts Adam")
expect_error(adafactor_megatron "{${h100x1}, \"plan\": {\"optimizer\": \"adafactor\", \"distributed_optimizer\": false, \"global_batch\": 64}}"
             "error: plan.optimizer=\"adafactor\": megatron-core cannot do it (Megatron-LM's --optimizer offers adam, sgd, muon")
expect_error(sgd_torchtitan "{${h100x1}, \"plan\": {\"framework\": \"torchtitan\", \"optimizer\": \"sgd\", \"global_batch\": 64}}"
             "error: plan.optimizer=\"sgd\": torchtitan cannot do it (torchtitan's OptimizersContainer builds Adam and AdamW only")
expect_error(sgd_momentum_range "{${h100x1}, \"plan\": {\"optimizer\": \"sgd\", \"sgd_momentum\": -0.1, \"distributed_optimizer\": false, \"global_batch\": 64}}"
             "error: plan.sgd_momentum")
expect_error(optimizer_choice "{${h100x1}, \"plan\": {\"optimizer\": \"lion\", \"global_batch\": 64}}"
             "plan.optimizer")

# Hybrid models (model.layer_pattern, megatron/core/ssm/mamba_hybrid_layer_allocation.py's
# symbols): the pattern's length, its characters, a Mamba mixer without Mamba layers.
set(hybrid "\"name\": \"h\", \"layers\": 4, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1000, \"seq_len\": 1024, \"ffn_type\": \"gelu\", \"position\": \"rope\", \"tied_embeddings\": false")
expect_error(hybrid_length "{\"model\": {${hybrid}, \"layer_pattern\": \"M*-\"}, ${h100x2}, \"plan\": {\"global_batch\": 16}}"
             "error: model.layer_pattern has 3 characters but model.layers=4: one per layer")
expect_error(hybrid_symbol "{\"model\": {${hybrid}, \"layer_pattern\": \"M*-X\"}, ${h100x2}, \"plan\": {\"global_batch\": 16}}"
             "error: model.layer_pattern[3]='X' is not a layer: one of M (Mamba), * (attention), - (MLP), E (MoE), G (Gated DeltaNet)")
expect_error(hybrid_gdn_cp "{\"model\": {${hybrid}, \"layer_pattern\": \"G*-G\"}, ${h100x2}, \"plan\": {\"cp\": 2, \"global_batch\": 16}}"
             "error: plan.cp=2 over Gated DeltaNet layers is not modelled (Megatron's all-to-all from sequence to heads): use plan.cp=1")
expect_error(hybrid_mamba_alone "{\"model\": {${hybrid}, \"mamba\": {\"state_dim\": 64}}, ${h100x2}, \"plan\": {\"global_batch\": 16}}"
             "error: model.mamba describes Mamba layers but model.layer_pattern has no M")
expect_error(hybrid_tp "{\"model\": {${hybrid}, \"layer_pattern\": \"M*-M\", \"mamba\": {\"num_heads\": 6, \"num_groups\": 3}}, ${h100x2}, \"plan\": {\"tp\": 2, \"global_batch\": 16}}"
             "error: plan.tp=2 must divide model.mamba.num_groups=3")
