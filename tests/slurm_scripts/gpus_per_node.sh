#!/bin/bash
# Source: github.com/rkenny/4960A, SUGER/submit.beluga.sh (4 tasks of 1 CPU, one GPU per node,
# memory per CPU; the program started once).
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --gpus-per-node=1
#SBATCH --mem-per-cpu=8G
python train.py
