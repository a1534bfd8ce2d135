#!/bin/bash
# Source: github.com/isaachenrion/jets, run.sh and train.s (an array of trainings submitted with
# `sbatch --parsable --array=1-$1`, then a summary that waits for all of them with
# --dependency=afterok:ARRAY_ID). This is the array's script: one training per task.
#SBATCH --time=1:00:00
#SBATCH --gres=gpu:1
#SBATCH --mem=4G
#SBATCH --output=train_%A_%a.out

python train.py --seed $SLURM_ARRAY_TASK_ID "$@"
