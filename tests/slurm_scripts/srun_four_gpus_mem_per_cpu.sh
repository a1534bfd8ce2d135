#!/bin/bash
# Source: github.com/Hadisalman/chexrobfer, chexnet/train_chexnet.sh (4 GPUs, 1 CPU, memory per
# CPU, srun).
#SBATCH --time=48:00:00
#SBATCH --partition=gpu
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=128

srun python3 Main.py
