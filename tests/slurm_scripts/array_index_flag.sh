#!/bin/bash
# Modelled on a public array script found by its text (8 CPUs a task, the task's index passed as
# --index $SLURM_ARRAY_TASK_ID; no GPU asked for). The array is 0-2 instead of 0-550; `module
# load` and `source activate` left out.
#SBATCH --time=07:30:00
#SBATCH --mem=32GB
#SBATCH --cpus-per-task=8
#SBATCH --array=0-2

echo "Task id is $SLURM_ARRAY_TASK_ID"

python train_test.py --config ./configs/example.yaml --index $SLURM_ARRAY_TASK_ID
