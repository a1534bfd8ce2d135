#!/bin/bash
# Source: github.com/hariharan-devarajan/jobspec-database,
# data/CSCfi/machine-learning-scripts/slurm/run-puhti-tf2-hvd.sh (Horovod: 4 tasks of 10 CPUs
# on one node with 4 GPUs, started by srun). `module load`/`module list` left out.
#SBATCH -N 1 -n 4 -c 10 -p gpu --gres=gpu:v100:4 -t 1:00:00 --mem=64G

set -xv
srun python3 $*
