#!/bin/bash
# Source: github.com/ConnollyLeon/DistributedTest, testPytorch/test_ddp.sh (DDP over 2 nodes, one
# task and one GPU each, srun -N 2). A pinpoint job has one node: refused at submit, in one line.
# `source ~/dat01/lpeng/env.bash` left out.

#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH -p gpu
#SBATCH --gres=gpu:1
#SBATCH --no-requeue

#Used for testing ddp
srun -N 2 --ntasks-per-node=1 --gres=gpu:1 -p gpu python -u ./src/ddp_test.py
