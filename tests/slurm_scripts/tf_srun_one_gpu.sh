#!/bin/bash
# Source: github.com/CSCfi/machine-learning-scripts, slurm/run-puhti-tf2.sh (every option on one
# #SBATCH line; the program and its arguments are the script's; started with srun). The
# `module load`/`module list` lines are left out.
#SBATCH -c 10 -p gpu --gres=gpu:v100:1 -t 1:00:00 --mem=64G

set -xv
srun python3.7 $*
