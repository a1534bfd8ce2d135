#!/bin/bash -ex
# Source: github.com/laura-rieger/segmenter, src/test_submit.sh (bash -ex, -n 8 tasks asked for
# but the program started once, without srun; comments after the directives; a typed GPU).
#SBATCH --mail-type=END,FAIL
#SBATCH --partition=sm3090_devel
#SBATCH -N 1      # Minimum of 1 node
#SBATCH -n 8     # 8 MPI processes per node
#SBATCH --time=0-00:15:00 # 2 days of runtime (can be set to 7 days)
#SBATCH --gres=gpu:RTX3090:1 # Request 1 GPU (can increase for more)

export MKL_NUM_THREADS=1
export NUMEXPR_NUM_THREADS=1
export OMP_NUM_THREADS=1
export OPENBLAS_NUM_THREADS=1
python train.py
