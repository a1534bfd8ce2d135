#!/bin/bash
# Source: github.com/csc-training/intro-to-dl, day2/run-hvd.sh (2 tasks of 20 CPUs, 2 GPUs, an
# account, srun; and a line that only looks like a directive). `module load`/`list` left out.
#SBATCH -A project_2002238 -N 1 -n 2
#SBATCH -c 20 -p gpu --gres=gpu:v100:2 -t 1:00:00 --mem=64G
# # # # #S B A TCH --reservation dlintro

set -xv
srun python3.7 $*
