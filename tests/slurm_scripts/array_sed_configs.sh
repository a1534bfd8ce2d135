#!/bin/sh
# Source: github.com/amitaysicherman/reactions, run_all.sh (an array whose tasks each train with
# one line of configs.txt). Kept: its structure and directives; the array is 1-3 instead of 1-12.
#SBATCH --time=3-00
#SBATCH --array=1-3
#SBATCH --mem=64G
#SBATCH --requeue
#SBATCH --gres=gpu:A40:1

args=$(sed -n "$SLURM_ARRAY_TASK_ID"p configs.txt)
python train.py $args
