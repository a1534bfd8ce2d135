#!/bin/bash -e
# Modelled on a public NeSI array script found by its text ("train_array": srun runs line
# $SLURM_ARRAY_TASK_ID of a commands file, output in slurm_log/%x_%j.out). `module load` and
# `source .../venv/bin/activate` left out.
#SBATCH --job-name=train_array
#SBATCH --output=slurm_log/%x_%j.out
#SBATCH --time=00:30:00
#SBATCH --mem=1G
#SBATCH --partition=gpu
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --array=1-2

srun $(head -n $SLURM_ARRAY_TASK_ID script_demo_array.txt | tail -n 1)
