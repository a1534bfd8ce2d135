#!/bin/bash
# Source: github.com/utiasSTARS/visual-haptic-dynamics, training_examples/cmd.sh (an array; each
# task runs the command on its line of the file named by the script's first argument; one GPU a
# task). The array is 1-2%2 instead of 1-16%16; the environment's `. .../pt151.env` is left out.
#SBATCH --ntasks=1 # Note that ntasks=1 runs multiple jobs in an array
#SBATCH --array=1-2%2
#SBATCH --gres=gpu:1
#SBATCH -p p100
#SBATCH --mem=32G
#SBATCH --qos=nopreemption
#SBATCH -o ./slurm_output/%J.out # this is where the output goes
#SBATCH --cpus-per-gpu=16        # number of CPUs we want per GPU
#SBATCH --gpus-per-task=1       # number of GPUs we want per task

cmd_line=$(sed "${SLURM_ARRAY_TASK_ID}q;d" ${1})
$cmd_line
