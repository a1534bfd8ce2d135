#!/bin/sh
# Source: github.com/amitaysicherman/reactome, protein_drug/train_eavl_all.sh (an array, 4 CPUs a
# task, the arguments of each task from its line of a file). The array is 1-2 instead of 1-64.
#SBATCH --time=0-3
#SBATCH --array=1-2
#SBATCH --gres=gpu:A4000:1
#SBATCH --mem=64G
#SBATCH -c 4
#SBATCH --requeue

args=$(sed -n "$SLURM_ARRAY_TASK_ID"p train_eval_all.txt)
python3 train_eval.py $args
