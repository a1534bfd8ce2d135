#!/bin/bash
# Source: github.com/GEEX-Weixing/GAGT-kdd, run.sh (one task of 7 CPUs, a typed GPU, stdout and
# stderr in %j.out and %j.err).
#SBATCH --partition=A800
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=7
#SBATCH --gres=gpu:a800:1
#SBATCH --output=%j.out
#SBATCH --error=%j.err

python train.py
echo "to stderr" >&2
