NCCL_DEBUG=WARN python -m torch.distributed.run --nnodes=2 --nproc_per_node=4 pretrain_gpt.py \
  --num-layers=24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 \
  --vocab-size 50257 --global-batch-size 64 --micro-batch-size 2 --fp16 \
  --recompute-granularity full --recompute-method block --recompute-num-layers 2 \
  --data-path 'a b' --lr "1e-4" # a comment
