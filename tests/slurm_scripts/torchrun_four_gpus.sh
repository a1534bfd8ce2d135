#!/bin/bash
# Source: github.com/jamesafranke/ViT_clouds, scripts/jim_bash.bash (4 GPUs, torchrun starting 4
# workers on the node, output and error files named %x_%A).
#SBATCH --time=00:30:00
#SBATCH --job-name=test
#SBATCH --output=%x_%A.out
#SBATCH --error=%x_%A.err
#SBATCH --partition=gpu
#SBATCH --gres=gpu:4

torchrun --nnodes=1:2 --nproc_per_node=4 --rdzv_id=100 --rdzv_backend=c10d --rdzv_endpoint=localhost:6000 torchrun_test.py
